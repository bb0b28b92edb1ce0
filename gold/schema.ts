/**
 * `oracle-traces/<id>/gold.json`: the gold permission set of one task and how
 * it was obtained. One zod schema, types via z.infer. `serializeGold` is the
 * only writer: sorted keys, sorted lists, no timestamps, trailing newline — so
 * deriving twice from the same trace gives the same bytes and `git diff` shows
 * real drift only.
 */
import { z } from 'zod';
import { compareStrings, stableStringify, zodProblems, type Problem } from '../core/index.ts';
import { normalizePattern, patternProblem } from '../sandbox/paths/index.ts';
import { canonicalAxes, type AxisLists } from './axes.ts';

export const GOLD_SCHEMA_VERSION = 1 as const;
/** Bumped whenever a derivation rule (derive.ts header) or the default implicit set changes meaning. */
export const DERIVATION_RULES_VERSION = 3 as const;

const entrySchema = z
  .string()
  .superRefine((s, ctx) => {
    const why = patternProblem(s);
    if (why !== undefined) ctx.addIssue({ code: 'custom', message: why });
    else if (normalizePattern(s) !== s) ctx.addIssue({ code: 'custom', message: `not normalised (expected ${normalizePattern(s)})` });
  })
  .describe('Absolute, normalised path pattern (segment-local globs, optional trailing /**)');

function listSchema(what: string) {
  return z
    .array(entrySchema)
    .superRefine((entries, ctx) => {
      const seen = new Set<string>();
      entries.forEach((e, i) => {
        if (seen.has(e)) ctx.addIssue({ code: 'custom', path: [i], message: `duplicate entry ${e}` });
        seen.add(e);
      });
    })
    .describe(what);
}

export function axisListsSchema(what: string) {
  return z
    .strictObject({
      read: listSchema(`${what}: read axis`),
      write: listSchema(`${what}: write axis`),
      execute: listSchema(`${what}: execute axis (realpaths inside the image)`),
    })
    .describe(what);
}

export const AxisListsSchema = axisListsSchema('Per-axis path patterns');

export const EndpointSchema = z
  .strictObject({
    family: z.enum(['inet', 'inet6']).describe('Address family'),
    address: z.string().describe('IP address as strace printed it, or the compose service name of a sidecar at that address'),
    port: z.number().int().min(0).max(65535).describe('Port (0 = let the kernel pick, for bind)'),
  })
  .describe('An IP endpoint the oracle used');

export const GoldNetworkSchema = z
  .strictObject({
    ip_sockets: z.boolean().describe('The oracle created at least one AF_INET/AF_INET6 socket'),
    connect: z
      .array(EndpointSchema)
      .describe('connect() destinations attempted (not denied); the socket type is not known from the trace'),
    bind: z.array(EndpointSchema).describe('bind() addresses attempted (not denied)'),
    send: z.array(EndpointSchema).describe('sendto/sendmsg/sendmmsg destinations (datagrams)'),
    unix: z.array(z.string()).describe('Unix socket paths connected to successfully (`@name` = abstract)'),
  })
  .describe('Network use seen in the oracle trace');

export const ProvenanceSchema = z
  .strictObject({
    source: z
      .enum(['oracle-trace', 'imported-spec'])
      .describe('oracle-trace: derived by running solve.sh under strace; imported-spec: taken from a hand-written permission_eval_spec.json'),
    image_digest: z.string().nullable().describe('Image id/digest the oracle ran in; null when imported'),
    solve_sh_sha256: z.string().nullable().describe('sha256 of solution/solve.sh; null when imported'),
    authbench_version: z.string().describe('authbench version that wrote the file'),
    runs: z.number().int().min(0).describe('How many oracle runs were merged (0 when imported)'),
    strace_version: z.string().optional().describe('strace version used for the trace'),
    tracer: z
      .enum(['strace', 'ebpf'])
      .optional()
      .describe('Which tracer watched the oracle (gen-gold --tracer); absent in files written before the choice existed (strace)'),
    bpftrace_version: z.string().optional().describe('bpftrace version, when the eBPF tracer watched the oracle with its bpftrace backend'),
    ebpf_backend: z
      .enum(['native', 'bpftrace'])
      .optional()
      .describe('Which eBPF backend traced (tracer ebpf): native (ab-ebpf, libbpf) or bpftrace; absent in files written before the native one existed (bpftrace)'),
    ab_ebpf_version: z.string().optional().describe('The native eBPF tracer\'s build: its builder image\'s content hash (sandbox/ebpf/native/)'),
    tracer_fallback: z
      .string()
      .optional()
      .describe('eBPF was asked for but strace traced instead (--tracer-fallback): why eBPF was unavailable'),
    derivation_rules_version: z.number().int().describe('Version of the derivation rules and default implicit set'),
    overrides_sha256: z.string().optional().describe('sha256 of the overrides.json applied on top, if any'),
  })
  .describe('Where the gold set came from; enough to tell whether it is stale');

export const MinimalSchema = z
  .strictObject({
    necessary: axisListsSchema('Required entries the oracle cannot do without (removing one alone breaks it)'),
    not_needed: axisListsSchema('Required entries this oracle passed without'),
    budget_exhausted: z
      .boolean()
      .describe('The time budget ran out; entries not yet shown removable are reported necessary'),
    tests: z.number().int().min(0).describe('Validator runs the minimizer used'),
  })
  .describe('Result of ablating required entries (delta debugging)');

export const GoldFileSchema = z
  .strictObject({
    schema_version: z.literal(GOLD_SCHEMA_VERSION).describe('Version of this file format'),
    task_id: z.string().min(1).describe('Task id (directory name under tasks/)'),
    required: axisListsSchema('S_gold: observed needs inside the scored roots, minus implicit; what policies are scored against'),
    support: axisListsSchema('Observed needs outside the scored roots and not implicit (e.g. cc1 under /usr/libexec): enforced, never scored'),
    directories: axisListsSchema(
      'Directories that existed before the run and were listed (read) or had their metadata changed / were removed (write): enforced, never scored',
    ),
    implicit: axisListsSchema('Runtime noise patterns (default set merged with the task spec\'s implicit_permissions)'),
    scored_roots: axisListsSchema('Directories whose contents are scored, per axis (exact paths)'),
    sensitive: axisListsSchema('Entries whose grant counts as sensitive exposure'),
    network: GoldNetworkSchema,
    ephemeral: axisListsSchema(
      'Patterns for files created and removed within the run (random temp names): the parent that outlives the run plus one `*` per segment, the last keeping its extension. Enforced, never scored',
    ),
    flaky: axisListsSchema('Entries seen in some oracle runs only (they are also in required/support/directories)'),
    provenance: ProvenanceSchema,
    minimal: MinimalSchema.optional().describe('Minimality result, when the minimizer was run'),
  })
  .describe('oracle-traces/<id>/gold.json');

export type GoldFile = z.infer<typeof GoldFileSchema>;
export type GoldNetwork = z.infer<typeof GoldNetworkSchema>;
export type Endpoint = z.infer<typeof EndpointSchema>;
export type Provenance = z.infer<typeof ProvenanceSchema>;
export type Minimal = z.infer<typeof MinimalSchema>;

export function emptyNetwork(): GoldNetwork {
  return { ip_sockets: false, connect: [], bind: [], send: [], unix: [] };
}

export function endpointKey(e: Endpoint): string {
  return e.family === 'inet6' ? `[${e.address}]:${e.port}` : `${e.address}:${e.port}`;
}

function sortEndpoints(list: readonly Endpoint[]): Endpoint[] {
  const byKey = new Map(list.map((e) => [`${e.family} ${endpointKey(e)}`, e]));
  return [...byKey.keys()].sort(compareStrings).map((k) => byKey.get(k) as Endpoint);
}

export function canonicalNetwork(n: GoldNetwork): GoldNetwork {
  return {
    ip_sockets: n.ip_sockets,
    connect: sortEndpoints(n.connect),
    bind: sortEndpoints(n.bind),
    send: sortEndpoints(n.send),
    unix: [...new Set(n.unix)].sort(compareStrings),
  };
}

/** Every list sorted and deduplicated; the form serializeGold writes. */
export function canonicalGold(gold: GoldFile): GoldFile {
  const axes = (s: AxisLists) => canonicalAxes(s);
  return {
    ...gold,
    required: axes(gold.required),
    support: axes(gold.support),
    directories: axes(gold.directories),
    implicit: axes(gold.implicit),
    scored_roots: axes(gold.scored_roots),
    sensitive: axes(gold.sensitive),
    network: canonicalNetwork(gold.network),
    ephemeral: axes(gold.ephemeral),
    flaky: axes(gold.flaky),
    ...(gold.minimal === undefined
      ? {}
      : { minimal: { ...gold.minimal, necessary: axes(gold.minimal.necessary), not_needed: axes(gold.minimal.not_needed) } }),
  };
}

/** Byte-identical for equal gold sets: sorted keys and lists, 2-space indent, trailing newline. */
export function serializeGold(gold: GoldFile): string {
  return `${stableStringify(canonicalGold(gold), 2)}\n`;
}

export interface GoldCheck {
  gold?: GoldFile;
  problems: Problem[];
}

/** Parse gold.json text; `file` names it in problems. */
export function parseGold(text: string, file: string): GoldCheck {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { problems: [{ file, message: `not valid JSON: ${e instanceof Error ? e.message : String(e)}`, severity: 'error' }] };
  }
  const parsed = GoldFileSchema.safeParse(value);
  if (!parsed.success) return { problems: zodProblems(parsed.error, file) };
  return { gold: canonicalGold(parsed.data), problems: [] };
}
