/**
 * A host trace (eBPF from the host, sandbox/ebpf/hub.ts) follows the whole container, not one
 * command: this splits it into the session's commands by process tree. Pure: events in, events
 * out; the session feeds it each take.
 *
 * - A command's tree is rooted at the launcher its keeper started (the first successful exec of
 *   the launcher by a child of the keeper, `ab-launch --keep`, whose pid the agent reports): the
 *   root and everything forked below it, as strace -f follows a command. The root's own events
 *   before its next exec are the launcher's setup, dropped as dropLauncherSetup drops them.
 * - A command the agent keeps in the background (a service) keeps its tree: later events of those
 *   processes are that job's, until the episode's stop.
 * - Everything else in the container (the session agent, the keeper, the validators' execs, a
 *   command's processes after it ended and was not kept) is no command's and is dropped.
 * - A fork gives the child its parent's owner and takes away any other: a pid the kernel reused
 *   belongs to whoever forked it now, never to the process that had it before.
 */
import type { TraceEvent } from '../trace/index.ts';

/** One container's share of a host tracer (sandbox/ebpf/hub.ts's HubTrace), as the session uses it. */
export interface HostTrace {
  /**
   * Everything the container did since the previous take; `lost`: events dropped meanwhile
   * (incomplete when > 0). `pause`: stop tracing it first, as pause() (one round trip fewer).
   */
  take(options?: { pause?: boolean }): Promise<{ events: TraceEvent[]; lost: number; bytes: number }>;
  /** Trace the container only while something of the agent's runs in it (a command, a kept service). */
  pause(): Promise<void>;
  resume(): Promise<void>;
  /** Stop following the container. */
  close(): Promise<unknown>;
}

/** A host tracer a container joins when it starts (sandbox/ebpf/hub.ts's EbpfHub); `paused`: not traced until resume(). */
export interface HostTracer {
  trace(containerId: string, options?: { paused?: boolean }): Promise<HostTrace>;
}

/** The command now running, or a background job's number. */
type Owner = 'command' | number;

export class HostTraceRouter {
  readonly #launcher: string;
  readonly #owner = new Map<number, Owner>();
  /** Fork parents seen, for finding the root: child → parent. */
  readonly #parent = new Map<number, number>();
  readonly #jobs = new Map<number, TraceEvent[]>();
  /** The running command: its keeper's pid, and once found its root and whether setup is over. */
  #command: { keeper: number; root?: number; inSetup: boolean; events: TraceEvent[] } | undefined;

  /** `launcher`: the launcher's path in the container (LAUNCHER_PATH). */
  constructor(launcher: string) {
    this.#launcher = launcher;
  }

  /** A command starts: its keeper is `keeper` (the agent's mainPid). Events until end() may be its. */
  begin(keeper: number): void {
    this.#command = { keeper, inSetup: true, events: [] };
  }

  /** Route one take's events: the command's are kept for end(), the background jobs' for their stop. */
  route(events: readonly TraceEvent[]): void {
    const command = this.#command;
    for (const e of events) {
      if (e.pid === undefined) {
        // Unattributable (a record the parser could not read): kept with the command, never hidden.
        if (command !== undefined && e.kind === 'unparsed') command.events.push(e);
        continue;
      }
      if (e.kind === 'process' && e.op === 'fork' && e.child !== undefined) {
        this.#parent.set(e.child, e.pid);
        const owner = this.#owner.get(e.pid);
        if (owner === undefined) this.#owner.delete(e.child);
        else this.#owner.set(e.child, owner);
      }
      if (command !== undefined && command.root === undefined && e.kind === 'exec' && e.result === 0 && e.path === this.#launcher && this.#parent.get(e.pid) === command.keeper) {
        command.root = e.pid;
        this.#owner.set(e.pid, 'command');
        continue;
      }
      const owner = this.#owner.get(e.pid);
      if (owner === undefined) continue;
      if (owner === 'command') {
        if (command === undefined) continue;
        if (command.inSetup && e.pid === command.root) {
          // execvp's attempts along PATH are the command's, whether or not they succeed.
          if (e.kind === 'exec') command.inSetup = false;
          else continue;
        }
        command.events.push(e);
      } else {
        this.#jobs.get(owner)?.push(e);
      }
    }
  }

  /**
   * The command ended: its events. `keptAs`: the agent kept its processes as this background job
   * (their later events are the job's); otherwise they were stopped, and a pid of theirs that shows
   * up again is someone else's.
   */
  end(keptAs?: number): TraceEvent[] {
    const command = this.#command;
    this.#command = undefined;
    // Only a command's root needs its parent: the next command's keeper forks anew.
    this.#parent.clear();
    if (keptAs !== undefined) this.#jobs.set(keptAs, []);
    for (const [pid, owner] of this.#owner) {
      if (owner !== 'command') continue;
      if (keptAs === undefined) this.#owner.delete(pid);
      else this.#owner.set(pid, keptAs);
    }
    return command?.events ?? [];
  }

  /**
   * A job's events since its command's result or the previous drain; the job stays followed (the
   * persistent shell: each call takes what the shell's tree did since the previous call).
   */
  drainJob(job: number): TraceEvent[] {
    const events = this.#jobs.get(job);
    if (events === undefined) return [];
    this.#jobs.set(job, []);
    return events;
  }

  /** A background job's events since its command's result (or the last call); the job is forgotten. */
  stopJob(job: number): TraceEvent[] {
    const events = this.#jobs.get(job) ?? [];
    this.#jobs.delete(job);
    for (const [pid, owner] of this.#owner) if (owner === job) this.#owner.delete(pid);
    return events;
  }

  /** Background jobs still followed. */
  get jobs(): number[] {
    return [...this.#jobs.keys()];
  }
}
