/**
 * Which process owns a container: every container and sidecar network authbench starts carries
 * the run id, the starting process's host pid, that process's start time, the kernel's boot id
 * and the host name (LABELS.owner*). A process that died without cleaning up (kill -9, a double
 * Ctrl-C) leaves containers whose owner is gone; `clean` and a job's next run remove only those,
 * never a live concurrent run's.
 *
 * The decision (ownerState) is pure: labels, who is asking, and a process lookup go in.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { LABELS } from './types.ts';

/** The process that starts containers, as recorded on them. */
export interface ProcessOwner {
  /** The authbench.run label when the caller names none (eval names its job). */
  runId: string;
  pid: number;
  /** /proc/<pid>/stat starttime (clock ticks after boot); undefined where /proc cannot say. */
  startTime: string | undefined;
  /** /proc/sys/kernel/random/boot_id; undefined where the kernel does not offer it. */
  bootId: string | undefined;
  host: string;
}

/** What the owner labels say about a container or network. */
export type OwnerState =
  /** The owner is running: leave it alone. */
  | 'alive'
  /** The owner ended (or the machine rebooted since): an orphan. */
  | 'gone'
  /** Recorded on another host (or container sharing the daemon), or without a start time: cannot be checked here. */
  | 'unknown'
  /** No owner labels (started before authbench recorded owners). */
  | 'unowned';

/** A process as /proc shows it. */
export interface ProcessInfo {
  /** The state letter: R, S, D, Z (zombie), … */
  state: string;
  startTime: string;
}

/** authbench.run plus the owner labels. Pure. */
export function ownerLabels(owner: ProcessOwner): Record<string, string> {
  return {
    [LABELS.run]: owner.runId,
    [LABELS.ownerPid]: String(owner.pid),
    [LABELS.ownerHost]: owner.host,
    ...(owner.startTime === undefined ? {} : { [LABELS.ownerStart]: owner.startTime }),
    ...(owner.bootId === undefined ? {} : { [LABELS.ownerBoot]: owner.bootId }),
  };
}

/**
 * Whether the process that labelled a resource still runs. `self` is the asking process's
 * host and boot; `lookup` finds a pid on this host (undefined: no such process). A pid is
 * compared with its start time, so a pid recycled by another process counts as gone; a zombie
 * holds nothing and counts as gone. Pure.
 */
export function ownerState(
  labels: Readonly<Record<string, string>>,
  self: Pick<ProcessOwner, 'host' | 'bootId'>,
  lookup: (pid: number) => ProcessInfo | undefined,
): OwnerState {
  const pidLabel = labels[LABELS.ownerPid];
  if (pidLabel === undefined) return 'unowned';
  if (labels[LABELS.ownerHost] !== self.host) return 'unknown';
  const boot = labels[LABELS.ownerBoot];
  if (boot !== undefined && self.bootId !== undefined && boot !== self.bootId) return 'gone';
  const start = labels[LABELS.ownerStart];
  const pid = Number(pidLabel);
  if (start === undefined || boot === undefined || !Number.isSafeInteger(pid) || pid <= 0) return 'unknown';
  const proc = lookup(pid);
  if (proc === undefined || proc.state === 'Z' || proc.startTime !== start) return 'gone';
  return 'alive';
}

/**
 * State and start time from a /proc/<pid>/stat line. The command name (field 2) is in
 * parentheses and may hold spaces and parentheses itself, so fields are counted after the
 * last `)`: state is field 3, starttime field 22. Pure.
 */
export function parseProcStat(text: string): ProcessInfo | undefined {
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  const fields = text.slice(close + 1).trim().split(/\s+/);
  const state = fields[0];
  const startTime = fields[19];
  if (state === undefined || startTime === undefined || !/^\d+$/.test(startTime)) return undefined;
  return { state, startTime };
}

/** A process on this host, from /proc; undefined when there is none (or no /proc). */
export function lookupProcess(pid: number): ProcessInfo | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

function readBootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** A run id for a command that is not an eval job (those are `job-<name>`). */
export function newRunId(): string {
  return `run-${randomBytes(6).toString('hex')}`;
}

/** This process as an owner, with a fresh run id. */
export function currentOwner(): ProcessOwner {
  return { runId: newRunId(), pid: process.pid, startTime: lookupProcess(process.pid)?.startTime, bootId: readBootId(), host: hostname() };
}
