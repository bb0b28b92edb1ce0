/**
 * Waiting out a Docker daemon that stopped answering (restarted, or stopped for good): ping it
 * until it answers or a deadline passes. A job uses this between rollouts, so a daemon restart
 * costs the rollouts it hit and no more, and a daemon that never comes back ends the job cleanly.
 */
import type { Engine } from './types.ts';

export interface DaemonWaitOptions {
  /** How long to keep trying after the first failed ping; 0: one ping only. */
  timeoutMs: number;
  /** Pause between pings (default 1 s; each ping has its own timeout too). */
  intervalMs?: number;
  /** Aborting gives up at once (Ctrl-C). */
  signal?: AbortSignal;
  /** Called once, when the first ping went unanswered: the caller says it is waiting (a silent minute looks hung). */
  onUnanswered?: () => void;
  /** Injected for tests. */
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

const DEFAULT_INTERVAL_MS = 1_000;

function sleepFor(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** True once the daemon answers a ping; false when it did not within the timeout (or the signal was aborted first). */
export async function waitForDaemon(engine: Pick<Engine, 'ping'>, options: DaemonWaitOptions): Promise<boolean> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? sleepFor;
  const deadline = now() + options.timeoutMs;
  for (let attempt = 0; ; attempt++) {
    if (options.signal?.aborted === true) return false;
    try {
      await engine.ping();
      return true;
    } catch {
      // Unreachable for now: try again until the deadline.
      if (attempt === 0) options.onUnanswered?.();
    }
    const left = deadline - now();
    if (left <= 0) return false;
    await sleep(Math.min(options.intervalMs ?? DEFAULT_INTERVAL_MS, left), options.signal);
  }
}

/**
 * One wait shared by every caller: a pool's workers all ask before starting a rollout, and while
 * the daemon is away they wait on the same pings. Once a wait has failed, the daemon is given up
 * on: every later `ready()` is false at once, so the job stops starting rollouts rather than
 * waiting the full timeout again for each.
 */
export class DaemonGate {
  private suspect = false;
  private lost = false;
  private pending: Promise<boolean> | undefined;
  private readonly engine: Pick<Engine, 'ping'>;
  private readonly options: DaemonWaitOptions;

  constructor(engine: Pick<Engine, 'ping'>, options: DaemonWaitOptions) {
    this.engine = engine;
    this.options = options;
  }

  /** Something failed in a way the daemon may explain: the next `ready()` checks it. */
  markSuspect(): void {
    this.suspect = true;
  }

  get gaveUp(): boolean {
    return this.lost;
  }

  /** Whether a rollout may start: at once when nothing is suspected, else after the daemon answers (or not, within the timeout). */
  async ready(): Promise<boolean> {
    if (this.lost) return false;
    if (!this.suspect) return true;
    this.pending ??= waitForDaemon(this.engine, this.options).then((up) => {
      this.pending = undefined;
      if (up) this.suspect = false;
      else this.lost = true;
      return up;
    });
    return this.pending;
  }
}
