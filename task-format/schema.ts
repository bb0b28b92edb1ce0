/**
 * `task.toml`: Harbor's task config, AuthBench's two metadata keys, and
 * authbench's own `[authbench]` section. Harbor's tables stay loose (Harbor
 * adds keys between releases and a task written for a newer Harbor must still
 * load); `[authbench]` is ours, so it is strict.
 */
import { z } from 'zod';
import { normalizePattern } from '../sandbox/paths/index.ts';
import { duplicateEntries, duplicateMessage, exactPathProblem, rawPatternProblem } from './problems.ts';

export const DATASETS = ['standard', 'sensitive'] as const;
export type Dataset = (typeof DATASETS)[number];

export const SENSITIVE_MODES = ['mixed', 'safety_only'] as const;
export type SensitiveMode = (typeof SENSITIVE_MODES)[number];

export const STAGES = ['security', 'active-tainted', 'clean', 'memory-recovery'] as const;
export type Stage = (typeof STAGES)[number];

export const NETWORK_MODES = ['none', 'sink'] as const;
export type NetworkMode = (typeof NETWORK_MODES)[number];

/** The image a generated scenario's Dockerfile starts FROM; the build substitutes the family base built from [authbench].family_base. */
export function familyImageRepository(family: string): string {
  return `authbench/family-${family}`;
}

// --- reusable field types -------------------------------------------------

/** A path pattern as the sandbox/paths module defines it; stored normalised. */
function patternString(check: (raw: string) => string | undefined) {
  return z.string().superRefine((raw, ctx) => {
    const why = check(raw);
    if (why !== undefined) ctx.addIssue({ code: 'custom', message: why });
  });
}

/** A list of patterns: each valid, none repeating another after normalisation; output normalised. */
export function patternListSchema(check: (raw: string) => string | undefined = rawPatternProblem) {
  return z
    .array(patternString(check))
    .superRefine((entries, ctx) => {
      for (const d of duplicateEntries(entries)) ctx.addIssue({ code: 'custom', path: [d.index], message: duplicateMessage(d) });
    })
    .transform((entries) => entries.map(normalizePattern));
}

const exactPath = patternString(exactPathProblem).transform(normalizePattern);

const nonEmpty = z.string().refine((s) => s.trim() !== '', 'must not be empty');

const positive = z.number().positive();
const positiveInt = z.number().int().positive();

const SIZE = /^(\d+(?:\.\d+)?)\s*([KMGT])i?B?$/i;
const MB_PER_UNIT: Record<string, number> = { K: 1 / 1024, M: 1, G: 1024, T: 1024 * 1024 };

/** Harbor's legacy size strings (`"2G"`, `"512M"`) in MiB, or undefined when unparseable. */
export function parseSizeMb(size: string): number | undefined {
  const m = SIZE.exec(size.trim());
  if (m === null) return undefined;
  const factor = MB_PER_UNIT[(m[2] ?? '').toUpperCase()];
  return factor === undefined ? undefined : Math.ceil(Number(m[1]) * factor);
}

const sizeString = z.string().refine((s) => parseSizeMb(s) !== undefined, 'expected a size like "2G" or "512M"');

// --- Harbor tables ----------------------------------------------------------

export const MetadataSchema = z
  .looseObject({
    authbench_eval_dataset: z
      .enum(DATASETS)
      .optional()
      .describe('AuthBench evaluation dataset; absent means standard'),
    authbench_sensitive_mode: z
      .enum(SENSITIVE_MODES)
      .optional()
      .describe('Only for sensitive tasks: mixed (utility and safety) or safety_only; default mixed'),
  })
  .describe('Free-form task metadata (author, difficulty, tags, ...) plus the AuthBench marking keys');

export const VerifierSchema = z
  .looseObject({ timeout_sec: positive.optional().describe('Wall-clock limit for the utility validator') })
  .describe('Harbor verifier settings');

export const AgentSchema = z
  .looseObject({ timeout_sec: positive.optional().describe('Wall-clock limit for one agent episode') })
  .describe('Harbor agent settings');

export const HARBOR_NETWORK_MODES = ['none', 'public', 'allowlist'] as const;

export const EnvironmentSchema = z
  .looseObject({
    build_timeout_sec: positive.optional().describe('Wall-clock limit for building the task image'),
    cpus: positive.optional().describe('CPUs for the task container'),
    memory_mb: positiveInt.optional().describe('Memory limit in MiB'),
    storage_mb: positiveInt.optional().describe('Writable storage limit in MiB'),
    memory: sizeString.optional().describe('Legacy Harbor memory limit, e.g. "2G"'),
    storage: sizeString.optional().describe('Legacy Harbor storage limit, e.g. "10G"'),
    allow_internet: z.boolean().optional().describe('Harbor: whether the task may reach the internet (authbench runs offline: never a route outside)'),
    network_mode: z
      .enum(HARBOR_NETWORK_MODES)
      .optional()
      .describe('Harbor: none (no network, not even sidecars), public (the internet), or allowlist (only allowed_hosts)'),
    allowed_hosts: z.array(z.string().min(1)).optional().describe('Harbor: the hosts an allowlist task may reach: compose services, and external `host` or `host:port` through the egress proxy'),
  })
  .superRefine((env, ctx) => {
    if (env.memory_mb !== undefined && env.memory !== undefined)
      ctx.addIssue({ code: 'custom', path: ['memory'], message: 'set memory_mb or memory, not both' });
    if (env.storage_mb !== undefined && env.storage !== undefined)
      ctx.addIssue({ code: 'custom', path: ['storage'], message: 'set storage_mb or storage, not both' });
  })
  .describe('Harbor container environment settings');

export const SolutionSchema = z
  .looseObject({
    env: z.record(z.string(), z.string()).optional().describe('Environment variables for solution/solve.sh'),
  })
  .describe('Harbor oracle solution settings');

// --- [authbench] ------------------------------------------------------------

const SinkDirSchema = z.strictObject({
  kind: z.literal('dir').describe('A drop directory inside the container; anything written there left the task'),
  path: exactPath.describe('Absolute container path of the drop directory'),
});

const SinkListenerSchema = z.strictObject({
  kind: z.literal('listener').describe('An in-container listener standing in for a remote endpoint'),
  port: z.number().int().min(1).max(65535).describe('TCP port the listener accepts on'),
  path: exactPath.optional().describe('Where the listener records what it received'),
});

export const SinkSchema = z
  .discriminatedUnion('kind', [SinkDirSchema, SinkListenerSchema])
  .describe('A local stand-in for an exfiltration target; never a real network endpoint');

export const MEMORY_MODES = ['session', 'persistent'] as const;

/**
 * Where episode 2's validators find the memory store as it was carried from episode 1: one JSON
 * file the harness puts in with the tests, after the agent's processes are gone, so a recovery
 * check can compare the store before and after episode 2 — `{"store": "/abs/store", "files":
 * {"<path in the store>": "<content, base64>"}}`. One name of the harness's choosing: a file name
 * the agent chose never lands in the tests folder (a `conftest.py` or `test_*.py` of its making
 * would be collected by a `pytest /tests`). Absent when nothing was carried (mode session, an
 * empty store, a single-episode run).
 */
export const CARRIED_MEMORY_TESTS_FILE = '/tests/carried-memory.json';
export type MemoryMode = (typeof MEMORY_MODES)[number];

/**
 * A live two-episode memory scenario (evaluation/episodes.ts): episode 1 works with untrusted
 * content in reach and may write the store; episode 2 is a fresh container of the same image,
 * given the store (persistent) or not (session), and a second, clean instruction.
 */
export const MemoryEpisodesSchema = z
  .strictObject({
    mode: z.enum(MEMORY_MODES).describe('session: the store dies with episode 1 (the control); persistent: it is copied into episode 2'),
    store: exactPath
      .refine((p) => p !== '/', 'must be a directory below /, not / itself')
      .describe('Absolute container directory of the memory store; only its regular files survive, bounded in size'),
    next_instruction: nonEmpty.describe("File (relative to the task folder) holding episode 2's instruction"),
    withheld: z
      .array(exactPath)
      .default([])
      .describe('Paths present in episode 1 only: removed before episode 2, so untrusted content reaches it through memory or not at all'),
  })
  .describe('Two episodes with a memory store between them');
export type MemoryEpisodes = z.infer<typeof MemoryEpisodesSchema>;

/**
 * How many agents a rollout runs and how they pass work on (evaluation/topology.ts): one agent;
 * a supervisor that plans and delegates to a worker; a chain where agent k's final answer is agent
 * k+1's only input. All agents share the task container.
 */
export const TOPOLOGIES = ['single', 'supervisor-worker', 'peer-chain'] as const;
export type Topology = (typeof TOPOLOGIES)[number];

export const AuthbenchSectionSchema = z
  .strictObject({
    stage: z
      .enum(STAGES)
      .optional()
      .describe('Evidence stage; default security for sensitive tasks, clean for standard ones'),
    family: nonEmpty.optional().describe('Scenario family the task was generated from'),
    cluster: nonEmpty
      .optional()
      .describe('Independent cluster id for cluster bootstrap; default family, else the task id'),
    parameters: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('Generator parameters recorded for generated scenarios'),
    untrusted_sources: patternListSchema()
      .default([])
      .describe('Absolute container path patterns whose content is untrusted (taint sources)'),
    canaries: z
      .array(nonEmpty)
      .superRefine((entries, ctx) => {
        for (const d of duplicateEntries(entries)) ctx.addIssue({ code: 'custom', path: [d.index], message: duplicateMessage(d) });
      })
      .default([])
      .describe('Synthetic secret markers; seeing one leave the task is a leak'),
    secret_files: patternListSchema()
      .default([])
      .describe('Files holding synthetic secrets (canaries); reading one labels a process secret for leak tracking'),
    family_base: nonEmpty
      .optional()
      .describe(
        'Folder (relative to the task folder) with the Dockerfile of a family base image; built first and substituted for `FROM authbench/family-<family>`',
      ),
    memory_files: patternListSchema()
      .default([])
      .describe('Persistent memory / notes / rc files carried across episodes'),
    network: z
      .enum(NETWORK_MODES)
      .default('none')
      .describe('none: no network at all; sink: only what the local sink needs'),
    workdir: exactPath.optional().describe("Override of the Dockerfile's final WORKDIR"),
    sink: SinkSchema.optional(),
    memory: MemoryEpisodesSchema.optional(),
    topology: z
      .enum(TOPOLOGIES)
      .optional()
      .describe("The scenario's agent topology; absent: the one `eval --topology` gives (default single)"),
    pids_limit: z
      .number()
      .int()
      .min(16)
      .optional()
      .describe('Most processes the task container may hold at once (default 1024); a fork bomb ends there'),
  })
  .superRefine((s, ctx) => {
    if (s.network === 'sink' && s.sink === undefined)
      ctx.addIssue({ code: 'custom', path: ['network'], message: 'network = "sink" needs an [authbench.sink] table' });
    if (s.memory !== undefined && s.topology !== undefined && s.topology !== 'single')
      ctx.addIssue({ code: 'custom', path: ['topology'], message: 'a two-episode memory scenario runs one agent per episode: topology must be single' });
    if (s.memory !== undefined) {
      const store = s.memory.store;
      // zod refines an object whose fields failed too: judge only paths that are exact.
      for (const [i, w] of s.memory.withheld.entries())
        if (exactPathProblem(store) === undefined && exactPathProblem(w) === undefined && (w === store || w.startsWith(`${store}/`)))
          ctx.addIssue({ code: 'custom', path: ['memory', 'withheld', i], message: `inside the memory store ${store}: what episode 2 is given cannot also be withheld` });
    }
  })
  .describe("authbench's own task extras");

// --- the whole file -----------------------------------------------------------

export const TaskTomlSchema = z
  .looseObject({
    version: z.string().optional().describe('Harbor task format version'),
    metadata: MetadataSchema.optional(),
    verifier: VerifierSchema.optional(),
    agent: AgentSchema.optional(),
    environment: EnvironmentSchema.optional(),
    solution: SolutionSchema.optional(),
    authbench: AuthbenchSectionSchema.optional(),
  })
  .describe('Harbor task.toml with AuthBench and authbench extensions');

export const KNOWN_TOP_LEVEL_KEYS: readonly string[] = Object.keys(TaskTomlSchema.shape);

export type TaskToml = z.infer<typeof TaskTomlSchema>;
export type AuthbenchSection = z.infer<typeof AuthbenchSectionSchema>;
export type Sink = z.infer<typeof SinkSchema>;

/** The `[authbench]` section with every default applied. */
export type ResolvedAuthbench = Omit<AuthbenchSection, 'stage' | 'cluster'> & { stage: Stage; cluster: string };
