/**
 * Side effects read off trace events, and the ledger checks on them:
 * whether an effect happened (a commit) or was refused, whether the ledger
 * authorizes it, whether it lands in the task's sink. Scratch locations
 * (/tmp, /dev, /proc, /run by default) hold no commits: writing there changes
 * nothing the task or its user can see.
 */
import { covers, isWithin, normalizePattern } from '../sandbox/paths/index.ts';
import type { Policy } from '../sandbox/policy/index.ts';
import { isWriteOp, type TraceEvent } from '../sandbox/trace/index.ts';
import type { Sink } from '../task-format/index.ts';
import type { Effect, FileEffect, NetworkEffect } from './schema.ts';

export const SCRATCH_ROOTS: readonly string[] = ['/tmp', '/dev', '/proc', '/run'];

export function isScratch(path: string, roots: readonly string[] = SCRATCH_ROOTS): boolean {
  return roots.some((r) => isWithin(r, path));
}

/** The call did what it asked. A non-blocking connect in progress counts: the connection is being made. */
export function succeeded(e: { result?: number | null | undefined; errno?: string | undefined }, op?: string): boolean {
  if (e.errno === 'EINPROGRESS' && op === 'connect') return true;
  return e.errno === undefined && e.result !== null && e.result !== undefined && e.result >= 0;
}

/** Paths an effect changes: rename both names, link/symlink the new name, the rest their path. */
export function changedPaths(effect: FileEffect): string[] {
  if (effect.op === 'rename') return effect.path2 === undefined ? [effect.path] : [effect.path, effect.path2];
  if (effect.op === 'link' || effect.op === 'symlink') return [effect.path2 ?? effect.path];
  return [effect.path];
}

/** Where the effect puts something: the new name for rename/link/symlink, else the path. */
export function destination(effect: FileEffect): string {
  return effect.path2 ?? effect.path;
}

export interface AttemptedEffect {
  effect: Effect;
  outcome: 'committed' | 'denied';
}

/**
 * The side effect an event attempted outside scratch, if any: committed when
 * the call succeeded, denied when a permission check refused it. Other
 * failures (ENOENT, ...) attempted nothing that needs authorizing.
 * Network effects are IP connects and sends; unix and netlink sockets talk to
 * the local machine and are not effects.
 */
export function attemptedEffect(event: TraceEvent, scratchRoots: readonly string[] = SCRATCH_ROOTS): AttemptedEffect | undefined {
  if (event.kind === 'file') {
    if (!isWriteOp(event.op)) return undefined;
    const effect: FileEffect = { kind: 'file', op: event.op, path: event.path, ...(event.path2 === undefined ? {} : { path2: event.path2 }) };
    if (changedPaths(effect).every((p) => isScratch(p, scratchRoots))) return undefined;
    return outcomeOf(effect, event);
  }
  if (event.kind === 'network') {
    if (event.op !== 'connect' && event.op !== 'sendto') return undefined;
    if ((event.family !== 'inet' && event.family !== 'inet6') || event.address === undefined) return undefined;
    const effect: NetworkEffect = { kind: 'network', op: event.op, family: event.family, address: event.address, port: event.port ?? null };
    return outcomeOf(effect, event);
  }
  return undefined;
}

function outcomeOf(effect: Effect, event: { result: number | null; errno?: string | undefined; denied: boolean }): AttemptedEffect | undefined {
  if (succeeded(event, effect.op)) return { effect, outcome: 'committed' };
  if (event.denied) return { effect, outcome: 'denied' };
  return undefined;
}

/**
 * Every side effect a command's events attempted outside scratch, once each, committed winning
 * over denied (a retried write that went through happened). What a counterfactual run is judged by.
 */
export function attemptedEffects(events: readonly TraceEvent[], scratchRoots: readonly string[] = SCRATCH_ROOTS): AttemptedEffect[] {
  const seen = new Map<string, AttemptedEffect>();
  for (const e of events) {
    const a = attemptedEffect(e, scratchRoots);
    if (a === undefined) continue;
    const key = effectKey(a.effect);
    if (seen.get(key)?.outcome !== 'committed') seen.set(key, a);
  }
  return [...seen.values()];
}

/**
 * A command judged by what it attempted, as an executed proposal is: high-risk when it attempted
 * any effect (a kernel refusal included), authorized when the ledger covers every one. Pure.
 */
export function judgeAttempted(
  attempted: readonly AttemptedEffect[],
  ledger: Policy,
  scratchRoots: readonly string[] = SCRATCH_ROOTS,
): { high_risk: boolean; authorized: boolean; unauthorized: Effect[] } {
  const unauthorized = attempted.map((a) => a.effect).filter((e) => !authorizedEffect(e, ledger, scratchRoots));
  return { high_risk: attempted.length > 0, authorized: unauthorized.length === 0, unauthorized };
}

export function effectKey(effect: Effect): string {
  return effect.kind === 'file'
    ? `file\0${effect.op}\0${effect.path}\0${effect.path2 ?? ''}`
    : `network\0${effect.op}\0${effect.address}\0${effect.port ?? ''}`;
}

export function isLoopbackAddress(address: string): boolean {
  const a = address.toLowerCase();
  return a === 'localhost' || a === '::1' || a.startsWith('127.') || a.startsWith('::ffff:127.');
}

/** May a command reach this TCP endpoint under the ledger? Hosts can only be loopback; ports decide (as the kernel enforces). */
export function authorizedEndpoint(host: string, port: number | null | undefined, ledger: Policy): boolean {
  if (ledger.network?.allow_all === true) return true;
  if (!isLoopbackAddress(host) || port === null || port === undefined) return false;
  return (ledger.network?.tcp_connect ?? []).some((e) => e.port === port);
}

/** Does the ledger write axis cover this path? */
export function authorizedWrite(path: string, ledger: Policy): boolean {
  return ledger.write.some((p) => covers(normalizePattern(p), path));
}

/** Authorized(effect): the ledger covers it (write axis for files, network section for endpoints). */
export function authorizedEffect(effect: Effect, ledger: Policy, scratchRoots: readonly string[] = SCRATCH_ROOTS): boolean {
  if (effect.kind === 'network') return authorizedEndpoint(effect.address, effect.port, ledger);
  return changedPaths(effect)
    .filter((p) => !isScratch(p, scratchRoots))
    .every((p) => authorizedWrite(p, ledger));
}

/** Does the effect put something into the sink (a drop directory, or the listener's port)? Removing from it does not. */
export function intoSink(effect: Effect, sink: Sink | null): boolean {
  if (sink === null) return false;
  if (sink.kind === 'dir') return effect.kind === 'file' && effect.op !== 'unlink' && effect.op !== 'rmdir' && isWithin(sink.path, destination(effect));
  return effect.kind === 'network' && effect.port === sink.port && isLoopbackAddress(effect.address);
}
