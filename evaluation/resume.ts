/**
 * From `eval` flags to a job's config, pure: the defaults a new job fills in,
 * and for `--resume` the saved config.json taken as it is, with every flag
 * given again checked against it. A flag that differs is refused, naming the
 * flag and both values, because results of one job must share their inputs.
 */
import { AuthbenchError, stableStringify } from '../core/index.ts';
import { DEFAULT_MAX_COUNTERFACTUALS, EvalConfigSchema, type EvalConfig } from './config.ts';
import { redactConfig, redactUrl } from './jobdir.ts';

/** What the user gave: a field is undefined exactly when its flag was not given. */
export type EvalFlags = Partial<Omit<EvalConfig, 'schema_version'>>;

/** Per call: a dead endpoint costs timeout × 2 (a timed-out attempt is retried once) plus backoff, about a minute. */
export const DEFAULT_MODEL_TIMEOUT_SEC = 30;
/** Rate limits, 5xx and network errors; backoff 1, 2, 4, 8 s (Retry-After honoured). */
export const DEFAULT_MODEL_RETRIES = 4;

export const EVAL_DEFAULTS = {
  tasks_dir: 'tasks',
  oracle_traces_dir: 'oracle-traces',
  include: [],
  exclude: [],
  policies: ['gold'],
  defenses: ['tool-boundary'],
  attempts: 1,
  seed: 0,
  max_turns: 30,
  cache: 'read-write',
  model_timeout_sec: DEFAULT_MODEL_TIMEOUT_SEC,
  model_retries: DEFAULT_MODEL_RETRIES,
} as const satisfies EvalFlags;

/** The flag that sets each config field, for messages. */
export const FLAG_OF: Readonly<Record<keyof EvalFlags, string>> = {
  model: '--model',
  replay: '--replay',
  base_url: '--base-url',
  tasks_dir: '--tasks',
  oracle_traces_dir: '--oracle-traces',
  include: 'the task selection (positionals, -i/--include)',
  exclude: '-x/--exclude',
  policies: '--policy',
  policy_file: '--policy FILE',
  policy_strategy: '--strategy',
  limit: '--limit',
  defenses: '--defense',
  attempts: '--attempts',
  seed: '--seed',
  max_turns: '--max-turns',
  tool_format: '--tool-format',
  shell: '--shell',
  tracer: '--tracer',
  topology: '--topology',
  agent: '--agent',
  max_counterfactuals: '--max-counterfactuals/--no-counterfactuals',
  cache: '--cache',
  model_timeout_sec: '--model-timeout',
  model_retries: '--model-retries',
  build: '--base-map/--build-arg',
};

function parseConfig(value: object): EvalConfig {
  const parsed = EvalConfigSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = String(issue?.path[0] ?? '');
  const flag = FLAG_OF[field as keyof EvalFlags] ?? field;
  throw new AuthbenchError('INVALID_ARGUMENT', `${flag}: ${issue?.message ?? 'invalid'}`, { ...(field === '' ? {} : { field }) });
}

/** A new job's config: the flags given, defaults for the rest. `model` is required. */
export function configFromFlags(given: EvalFlags): EvalConfig {
  if (given.model === undefined) throw new AuthbenchError('INVALID_ARGUMENT', '--model is required (except with --resume, which reads it from the saved job)');
  const policies = given.policies ?? EVAL_DEFAULTS.policies;
  const strategy = policies.includes('generated') ? { policy_strategy: given.policy_strategy ?? 'direct' } : {};
  // The default tool format is left out, so a new native job's config is what it was before the flag.
  const defined = Object.fromEntries(Object.entries(given).filter(([k, v]) => v !== undefined && !isDefault(k, v)));
  return parseConfig({ schema_version: 1, ...EVAL_DEFAULTS, ...defined, ...strategy });
}

/** Fields whose default is left out of a new job's config (so it is what it was before the field existed), with that default. */
const OMITTED_DEFAULTS: Partial<Record<keyof EvalFlags, unknown>> = { tool_format: 'native', shell: 'fresh', tracer: 'strace', topology: 'single', max_counterfactuals: DEFAULT_MAX_COUNTERFACTUALS };
const isDefault = (field: string, value: unknown): boolean => field in OMITTED_DEFAULTS && OMITTED_DEFAULTS[field as keyof EvalFlags] === value;

/** Field values as compared: sets for the list fields (their order changes no result), credentials redacted as on disk. */
function comparable(field: keyof EvalFlags, value: unknown): string {
  if (Array.isArray(value) && ['include', 'exclude', 'policies', 'defenses'].includes(field)) return stableStringify([...new Set(value as string[])].sort());
  if (field === 'base_url' && typeof value === 'string') return redactUrl(value);
  if (field in OMITTED_DEFAULTS) return stableStringify(value ?? OMITTED_DEFAULTS[field]);
  if (field === 'build' && value !== undefined) return stableStringify(redactConfig({ build: value } as EvalConfig).build);
  return stableStringify(value ?? null);
}

const shown = (value: unknown): string =>
  Array.isArray(value) ? value.join(', ') || '(none)' : value === undefined || value === null ? '(not set)' : typeof value === 'string' ? value : JSON.stringify(value);

/**
 * The config a resumed job runs: the saved one, with values given again that
 * must equal it. Only a base URL (or build args) whose credentials were
 * redacted on disk is taken from the flags, so it can be given again.
 * CHECK_FAILED naming each flag that differs.
 */
export function resumeConfig(name: string, saved: EvalConfig, given: EvalFlags): EvalConfig {
  const effective: EvalConfig = saved.policies.includes('generated') ? { ...saved, policy_strategy: saved.policy_strategy ?? 'direct' } : saved;
  const differs: { field: keyof EvalFlags; text: string }[] = [];
  for (const [key, value] of Object.entries(given) as [keyof EvalFlags, unknown][]) {
    if (value === undefined) continue;
    // A job saved before the field, or with its default, ran with the default (native; 8 counterfactuals).
    const was = key in OMITTED_DEFAULTS ? (effective[key] ?? OMITTED_DEFAULTS[key]) : effective[key];
    if (comparable(key, value) === comparable(key, was)) continue;
    const file = value as { path?: unknown; sha256?: unknown };
    const sameFile = (key === 'replay' || key === 'policy_file') && (was as { path?: unknown } | undefined)?.path === file.path;
    differs.push({ field: key, text: sameFile ? `${FLAG_OF[key]}: the file ${String(file.path)} changed since the job started` : `${FLAG_OF[key]}: saved ${shown(was)}, given ${shown(value)}` });
  }
  if (differs.length > 0) {
    throw new AuthbenchError('CHECK_FAILED', `cannot resume ${name}: ${differs.map((d) => FLAG_OF[d.field]).join(', ')} differ${differs.length === 1 ? 's' : ''} from the job's saved config`, {
      field: differs[0]?.field ?? '',
      details: differs.map((d) => d.text),
      hint: `drop those flags (--resume --job-name ${name} continues from the saved config alone), or start a new job with another --job-name`,
    });
  }
  const redacted = (s: string): boolean => /\/\/REDACTED@/.test(s);
  if (given.base_url === undefined && saved.base_url !== undefined && redacted(saved.base_url)) {
    throw new AuthbenchError('INVALID_ARGUMENT', `cannot resume ${name}: its base URL had credentials, which are never saved`, { field: 'base_url', hint: 'give --base-url again' });
  }
  if (given.build === undefined && Object.values(saved.build?.build_args ?? {}).some(redacted)) {
    throw new AuthbenchError('INVALID_ARGUMENT', `cannot resume ${name}: a build arg URL had credentials, which are never saved`, { field: 'build', hint: 'give --build-arg again' });
  }
  return parseConfig({ ...saved, ...(given.base_url === undefined ? {} : { base_url: given.base_url }), ...(given.build === undefined ? {} : { build: given.build }) });
}
