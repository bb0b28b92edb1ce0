/**
 * Container removal off a rollout's critical path. Removing a rollout's container (and its
 * sidecars, its egress proxy) takes the daemon ~0.1–0.2 s and decides nothing: the verdicts were
 * read before. So a job hands each rollout's removal to this queue; the rollout returns, its
 * result is written and its slot taken by the next one while the removal runs. The job waits
 * for every removal before it returns (settle), and a removal that failed is reported then —
 * never dropped: the containers carry the job's run label, which `authbench clean` and the next
 * run's orphan sweep find.
 */
import type { TaskSandbox } from '../taskenv/index.ts';

export interface TeardownFailure {
  /** Whose removal it was (the rollout id). */
  label: string;
  message: string;
}

export class TeardownQueue {
  private readonly pending = new Set<Promise<void>>();
  private readonly failures: TeardownFailure[] = [];

  /** Start `dispose` now, without waiting for it. */
  defer(label: string, dispose: () => Promise<void>): void {
    const running: Promise<void> = dispose()
      .catch((e: unknown) => {
        this.failures.push({ label, message: e instanceof Error ? e.message : String(e) });
      })
      .finally(() => this.pending.delete(running));
    this.pending.add(running);
  }

  /** Removals still running. */
  get size(): number {
    return this.pending.size;
  }

  /** Wait for every removal started so far (and any started meanwhile); the failures so far, in order. */
  async settle(): Promise<TeardownFailure[]> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
    return [...this.failures];
  }
}

/**
 * The sandbox, disposed through `queue` when there is one: its session (the in-container agent,
 * and whatever commands it still runs) is closed before dispose returns, as before; the
 * container's removal is deferred. Without a queue, the sandbox as it is.
 */
export function deferRemoval<T extends Pick<TaskSandbox, 'session' | typeof Symbol.asyncDispose>>(box: T, queue: TeardownQueue | undefined, label: string): T {
  if (queue === undefined) return box;
  return {
    ...box,
    [Symbol.asyncDispose]: async (): Promise<void> => {
      try {
        await box.session.close();
      } finally {
        queue.defer(label, () => box[Symbol.asyncDispose]());
      }
    },
  };
}
