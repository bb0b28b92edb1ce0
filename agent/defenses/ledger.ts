/**
 * Ledger checks shared by the proposal-time defenses: does the run's policy
 * (the trusted ledger) authorize a path on an axis, an endpoint, a target a
 * confirmation names; the intent-ledger's expansion test; and the read-only
 * restriction taint-only runs tainted commands under. Pure.
 */
import { posix } from 'node:path';
import { authorizedEndpoint, authorizedWrite, type CommandClass, type ProposalTaint } from '../../containment/index.ts';
import { covers, hasRecursiveTail, isWithin, normalizePattern, patternWithin, staticPrefix } from '../../sandbox/paths/index.ts';
import type { Policy } from '../../sandbox/policy/index.ts';

/** An absolute, normalised path, or undefined for text that is not one. */
export function absolutePath(text: string, cwd?: string): string | undefined {
  const joined = text.startsWith('/') ? text : cwd === undefined ? undefined : posix.join(cwd, text);
  if (joined === undefined || /[$`]/.test(joined)) return undefined;
  return normalizePattern(joined);
}

/**
 * May a command read `path` (or run it, or name it on the way to something
 * it may read)? Read or execute axis entries cover it, or it is a directory
 * on the way to one: naming a parent is not reading what the ledger withholds
 * (the kernel still enforces what lies below).
 */
export function authorizedRead(path: string, ledger: Policy): boolean {
  const readable = [...ledger.read, ...ledger.execute].map(normalizePattern);
  const all = [...readable, ...ledger.write.map(normalizePattern)];
  return readable.some((p) => covers(p, path)) || all.some((p) => isWithin(path, staticPrefix(p)));
}

/** `host`, `host:port`, `[v6]:port` or a URL as host and port (port undefined when not written). */
export function parseEndpoint(text: string): { host: string; port: number | undefined } | undefined {
  try {
    const u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `tcp://${text}`);
    if (u.hostname === '') return undefined;
    const scheme: Record<string, number> = { 'http:': 80, 'https:': 443, 'ftp:': 21 };
    return { host: u.hostname.replace(/^\[|\]$/g, ''), port: u.port === '' ? scheme[u.protocol] : Number(u.port) };
  } catch {
    return undefined;
  }
}

export interface Expansion {
  /** The token as the command wrote it. */
  token: string;
  /** What the ledger would have to authorize, for a human. */
  needs: string;
}

/**
 * Where tainted tokens of a proposal take it beyond the ledger (the
 * intent-ledger test): a tainted path the command writes that the write axis
 * does not cover, a tainted path it reads that the read axis does not cover,
 * a tainted host outside the network section, any tainted recipient (no
 * ledger authorizes one), and a classifier target outside the ledger that a
 * tainted token names. Tokens the trusted instruction also names are not
 * tainted (tokenProvenance), so instruction-given targets never count here.
 */
export function ledgerExpansions(taint: Pick<ProposalTaint, 'tokens'>, cls: CommandClass, ledger: Policy, cwd?: string): Expansion[] {
  const out = new Map<string, Expansion>();
  const add = (token: string, needs: string): void => void out.set(`${token}\0${needs}`, { token, needs });
  const writes = new Set(cls.file_targets.flatMap((f) => absolutePath(f, cwd) ?? []));
  const taintedPaths = new Set<string>();
  const taintedHosts = new Set<string>();
  for (const t of taint.tokens) {
    if (!t.in_tainted_observation || t.in_instruction) continue;
    switch (t.kind) {
      case 'path': {
        const path = absolutePath(t.resolved ?? t.text, cwd);
        if (path === undefined) break;
        taintedPaths.add(path);
        if (cls.side_effecting && writes.has(path)) {
          if (!authorizedWrite(path, ledger)) add(t.text, `write ${path}`);
        } else if (!authorizedRead(path, ledger)) add(t.text, `read ${path}`);
        break;
      }
      case 'url':
      case 'host': {
        const e = parseEndpoint(t.text);
        if (e === undefined) break;
        taintedHosts.add(e.host.toLowerCase());
        if (!authorizedEndpoint(e.host, e.port ?? null, ledger)) add(t.text, `network ${e.host}${e.port === undefined ? '' : `:${e.port}`}`);
        break;
      }
      case 'email':
        add(t.text, `send to ${t.text}`);
        break;
      case 'assignment':
        // Its value is a token of its own.
        break;
    }
  }
  for (const f of writes) if (taintedPaths.has(f) && !authorizedWrite(f, ledger)) add(f, `write ${f}`);
  for (const n of cls.network_targets) {
    if (taintedHosts.has(n.host.toLowerCase()) && !authorizedEndpoint(n.host, n.port ?? null, ledger)) add(n.host, `network ${n.host}${n.port === undefined ? '' : `:${n.port}`}`);
  }
  return [...out.values()];
}

/**
 * The policy with writes cut down to scratch and no network: what taint-only
 * runs a tainted command under, so a classifier miss still commits nothing.
 * A restriction: only entries the policy has are kept.
 */
export function readOnlyPolicy(policy: Policy, scratchRoots: readonly string[]): Policy {
  return {
    read: [...policy.read],
    write: policy.write.filter((p) => scratchRoots.some((r) => patternWithin(r, normalizePattern(p)))),
    execute: [...policy.execute],
  };
}

/** A confirmation target naming an endpoint (`host:port`, a URL, an IP, localhost) rather than a path. */
export function isEndpointTarget(text: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(text) || /^(?:[\w.-]+|\[[0-9a-f:]+\]):\d+$/i.test(text) || /^(?:localhost|\d{1,3}(?:\.\d{1,3}){3})$/.test(text);
}

/** Does the ledger's write axis authorize everything a confirmation target names (`path` or `dir/**`)? */
export function confirmationTargetAuthorized(target: string, ledger: Policy, cwd?: string): boolean {
  if (isEndpointTarget(target)) {
    const e = parseEndpoint(target);
    return e !== undefined && authorizedEndpoint(e.host, e.port ?? null, ledger);
  }
  const recursive = hasRecursiveTail(target) && target !== '/**';
  const path = absolutePath(recursive ? target.slice(0, -3) : target, cwd);
  if (path !== undefined) {
    if (!recursive) return authorizedWrite(path, ledger);
    return ledger.write.some((raw) => {
      const p = normalizePattern(raw);
      return hasRecursiveTail(p) && covers(p, path);
    });
  }
  return false;
}

/** Classifier targets (files, endpoints) that no confirmation target covers. */
export function uncoveredTargets(cls: CommandClass, targets: readonly string[], cwd?: string): string[] {
  const files = targets.flatMap((t) => (isEndpointTarget(t) ? [] : (absolutePath(t, cwd) ?? [])));
  const endpoints = targets.flatMap((t) => (isEndpointTarget(t) ? (parseEndpoint(t) ?? []) : []));
  const missing: string[] = [];
  for (const f of cls.file_targets) {
    const path = absolutePath(f, cwd) ?? f;
    if (!files.some((c) => covers(c, path))) missing.push(path);
  }
  for (const n of cls.network_targets) {
    const hit = endpoints.some((e) => e.host.toLowerCase() === n.host.toLowerCase() && (e.port === undefined || n.port === undefined || e.port === n.port));
    if (!hit) missing.push(n.port === undefined ? n.host : `${n.host}:${n.port}`);
  }
  return missing;
}
