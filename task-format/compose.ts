/**
 * A task's `environment/docker-compose.yaml`: the sidecar services Harbor
 * starts next to the task container (service `main`). authbench starts them
 * itself through the Engine API, so it accepts only the compose subset it
 * implements; any other key is an error naming the file and the key path,
 * never silently ignored (a dropped `ports` or `volumes` would change what the
 * task measures). Pure: text in, typed environment or problems out.
 */
import { posix } from 'node:path';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { z } from 'zod';
import type { Problem } from '../core/index.ts';
import { fieldPath, problem } from './problems.ts';

/** Compose file names Harbor looks for under environment/, in its order of preference. */
export const COMPOSE_FILES = ['docker-compose.yaml', 'docker-compose.yml', 'compose.yaml', 'compose.yml'] as const;

/** The compose service that is the task container itself. */
export const MAIN_SERVICE = 'main';

export const DEPENDS_CONDITIONS = ['service_started', 'service_healthy', 'service_completed_successfully'] as const;
export type DependsCondition = (typeof DEPENDS_CONDITIONS)[number];

const SERVICE_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;
const DURATION = /^(?:\d+(?:\.\d+)?(?:h|m|s|ms|us|ns))+$/;

const duration = z.string().regex(DURATION, 'a compose duration such as "5s", "1m30s" or "500ms"');
const stringList = z.array(z.string());
const commandLike = z.union([z.string(), stringList]);
// `${VAR}` would be interpolated from the host's environment by compose; authbench does not, so host secrets never reach a container.
const literal = z.string().refine((s) => !s.includes('${') && !/\$[A-Za-z_]/.test(s), 'variable interpolation ($VAR) is not supported');
const envValue = z.union([literal, z.number(), z.boolean(), z.null()]);

const BuildSchema = z.union([
  z.string().describe('The build context, relative to environment/'),
  z.strictObject({
    context: z.string().describe('The build context, relative to environment/'),
    dockerfile: z.string().optional().describe('The Dockerfile, relative to the context (default Dockerfile)'),
    args: z
      .union([z.record(z.string(), envValue), z.array(literal)])
      .optional()
      .describe('Build arguments, as a map or a list of NAME=value'),
  }),
]);

const HealthcheckSchema = z.strictObject({
  test: commandLike.describe('["CMD", argv...], ["CMD-SHELL", "script"], or a string run by the shell'),
  interval: duration.optional().describe('Time between checks (default 30s)'),
  timeout: duration.optional().describe('How long one check may take (default 30s)'),
  retries: z.number().int().min(0).optional().describe('Consecutive failures before the container is unhealthy (default 3)'),
  start_period: duration.optional().describe('Failures in this first period do not count (default 0s)'),
});

const DependsOnSchema = z.union([
  z.array(z.string()).describe('Services started first (condition service_started)'),
  z.record(z.string(), z.strictObject({ condition: z.enum(DEPENDS_CONDITIONS).optional().describe('What "ready" means (default service_started)') })),
]);

const EnvironmentSchema = z.union([z.record(z.string(), envValue), z.array(literal)]).describe('A map, or a list of NAME=value');

// pull_policy: authbench never pulls (offline); `always` would need a registry.
const PullPolicySchema = z.enum(['never', 'missing', 'if_not_present', 'build']).describe('authbench never pulls: only local images and builds');

const SidecarServiceSchema = z.strictObject({
  build: BuildSchema.optional(),
  image: z.string().optional().describe('A local image (authbench never pulls)'),
  healthcheck: HealthcheckSchema.optional(),
  depends_on: DependsOnSchema.optional(),
  environment: EnvironmentSchema.optional(),
  command: commandLike.optional().describe('Replaces the image CMD'),
  entrypoint: commandLike.optional().describe('Replaces the image ENTRYPOINT'),
  expose: z.array(z.union([z.string(), z.number()])).optional().describe('Documentation only: every port is reachable on the rollout network'),
  pull_policy: PullPolicySchema.optional(),
});

// The task container is built from environment/Dockerfile and runs the harness's idle process, so only these apply to it.
const MainServiceSchema = SidecarServiceSchema.pick({ depends_on: true, environment: true, expose: true, pull_policy: true });

const ComposeFileSchema = z.strictObject({
  services: z.record(z.string(), z.unknown()).describe('The services; `main` is the task container'),
  // Obsolete in the Compose Specification but still common; carries no meaning here.
  version: z.union([z.string(), z.number()]).optional(),
  name: z.string().optional(),
});

const SIDECAR_KEYS = Object.keys(SidecarServiceSchema.shape);
const MAIN_KEYS = Object.keys(MainServiceSchema.shape);

export interface Dependency {
  service: string;
  condition: DependsCondition;
}

export interface Healthcheck {
  /** As the Engine API takes it: ["CMD", ...], ["CMD-SHELL", script] or ["NONE"]. */
  test: string[];
  intervalMs?: number;
  timeoutMs?: number;
  retries?: number;
  startPeriodMs?: number;
}

export interface SidecarService {
  name: string;
  /** Build context relative to the task folder (posix), and the Dockerfile relative to that context. */
  build?: { context: string; dockerfile: string; args: Record<string, string> };
  image?: string;
  healthcheck?: Healthcheck;
  dependsOn: Dependency[];
  environment: Record<string, string>;
  command?: string[];
  entrypoint?: string[];
}

export interface ComposeEnvironment {
  /** The compose file, relative to the task folder. */
  file: string;
  /** What the task container waits for. */
  mainDependsOn: Dependency[];
  /** Extra environment of the task container. */
  mainEnvironment: Record<string, string>;
  /** Sidecars in an order that starts every dependency before its dependents. */
  sidecars: SidecarService[];
  /** Services declared but not started (their build files are missing in this copy). */
  dropped: string[];
}

/**
 * Parse compose text. `file` is the compose file relative to the task folder
 * (e.g. `environment/docker-compose.yaml`); `shownFile` names it in problems.
 */
export function parseCompose(text: string, file: string, shownFile: string = file): { compose?: ComposeEnvironment; problems: Problem[] } {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (e) {
    if (e instanceof YAMLParseError) {
      const at = e.linePos?.[0];
      return { problems: [problem(shownFile, undefined, `invalid YAML${at === undefined ? '' : ` at line ${at.line}, column ${at.col}`}: ${e.message.split('\n')[0] ?? ''}`)] };
    }
    throw e;
  }
  const top = ComposeFileSchema.safeParse(raw ?? {});
  if (!top.success) return { problems: composeProblems(top.error, shownFile, [], ['services', 'version', 'name']) };

  const problems: Problem[] = [];
  const parsed = new Map<string, z.infer<typeof SidecarServiceSchema>>();
  for (const [name, body] of Object.entries(top.data.services)) {
    if (!SERVICE_NAME.test(name)) {
      problems.push(problem(shownFile, fieldPath(['services', name]), `service name must match ${String(SERVICE_NAME)}`));
      continue;
    }
    const isMain = name === MAIN_SERVICE;
    const result = (isMain ? MainServiceSchema : SidecarServiceSchema).safeParse(body ?? {});
    if (!result.success) {
      problems.push(...composeProblems(result.error, shownFile, ['services', name], isMain ? MAIN_KEYS : SIDECAR_KEYS, isMain));
      continue;
    }
    parsed.set(name, result.data);
  }
  if (problems.length > 0) return { problems };

  const envDir = posix.dirname(file);
  const sidecars = new Map<string, SidecarService>();
  const deps = new Map<string, Dependency[]>();
  for (const [name, svc] of parsed) {
    const at = (...path: PropertyKey[]): string => fieldPath(['services', name, ...path]);
    const dependsOn = dependencies(svc.depends_on);
    deps.set(name, dependsOn);
    for (const d of dependsOn) {
      if (d.service === MAIN_SERVICE) problems.push(problem(shownFile, at('depends_on', d.service), 'a service cannot wait for the task container'));
      else if (!parsed.has(d.service)) problems.push(problem(shownFile, at('depends_on', d.service), 'no such service'));
      else if (d.service === name) problems.push(problem(shownFile, at('depends_on', d.service), 'a service cannot depend on itself'));
    }
    if (name === MAIN_SERVICE) continue;
    if (svc.build === undefined && svc.image === undefined) {
      problems.push(problem(shownFile, at(), 'needs `build` or `image`'));
      continue;
    }
    const build = svc.build === undefined ? undefined : buildOf(svc.build, envDir);
    if (build !== undefined && escapes(build.context)) problems.push(problem(shownFile, at('build', 'context'), 'leads outside the task folder'));
    sidecars.set(name, {
      name,
      ...(build === undefined ? {} : { build }),
      ...(svc.image === undefined ? {} : { image: svc.image }),
      ...(svc.healthcheck === undefined ? {} : { healthcheck: healthcheckOf(svc.healthcheck) }),
      dependsOn,
      environment: envOf(svc.environment),
      ...(svc.command === undefined ? {} : { command: argvOf(svc.command) }),
      ...(svc.entrypoint === undefined ? {} : { entrypoint: argvOf(svc.entrypoint) }),
    });
  }
  if (problems.length > 0) return { problems };
  const order = startOrder(sidecars);
  if (order === undefined) return { problems: [problem(shownFile, 'services', 'depends_on forms a cycle')] };
  const main = parsed.get(MAIN_SERVICE);
  return {
    compose: {
      file,
      mainDependsOn: deps.get(MAIN_SERVICE) ?? [],
      mainEnvironment: envOf(main?.environment),
      sidecars: order.map((n) => sidecars.get(n) as SidecarService),
      dropped: [],
    },
    problems,
  };
}

/** The environment without some sidecars (their files are missing), and without every wait on them. Pure. */
export function withoutSidecars(compose: ComposeEnvironment, drop: ReadonlySet<string>): ComposeEnvironment {
  const keep = (deps: readonly Dependency[]): Dependency[] => deps.filter((d) => !drop.has(d.service));
  return {
    ...compose,
    mainDependsOn: keep(compose.mainDependsOn),
    sidecars: compose.sidecars.filter((s) => !drop.has(s.name)).map((s) => ({ ...s, dependsOn: keep(s.dependsOn) })),
    dropped: [...new Set([...compose.dropped, ...drop])].sort(),
  };
}

/** Compose durations ("1m30s", "500ms") in milliseconds. Pure. */
export function parseDurationMs(text: string): number {
  const unit: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001, ns: 0.000001 };
  let ms = 0;
  for (const m of text.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|ns)/g)) ms += Number(m[1]) * (unit[m[2] ?? 's'] ?? 0);
  return Math.round(ms);
}

/** Services sorted so that dependencies come first (name order among equals); undefined on a cycle. */
function startOrder(services: ReadonlyMap<string, SidecarService>): string[] | undefined {
  const order: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string): boolean => {
    const s = state.get(name);
    if (s === 'done') return true;
    if (s === 'visiting') return false;
    state.set(name, 'visiting');
    for (const d of services.get(name)?.dependsOn ?? []) if (services.has(d.service) && !visit(d.service)) return false;
    state.set(name, 'done');
    order.push(name);
    return true;
  };
  for (const name of [...services.keys()].sort()) if (!visit(name)) return undefined;
  return order;
}

function dependencies(raw: z.infer<typeof DependsOnSchema> | undefined): Dependency[] {
  if (raw === undefined) return [];
  if (Array.isArray(raw)) return raw.map((service) => ({ service, condition: 'service_started' }));
  return Object.entries(raw).map(([service, v]) => ({ service, condition: v.condition ?? 'service_started' }));
}

function buildOf(raw: z.infer<typeof BuildSchema>, envDir: string): NonNullable<SidecarService['build']> {
  const spec = typeof raw === 'string' ? { context: raw } : raw;
  return { context: posix.normalize(posix.join(envDir, spec.context)), dockerfile: spec.dockerfile ?? 'Dockerfile', args: envOf(typeof raw === 'string' ? undefined : raw.args) };
}

function escapes(rel: string): boolean {
  return posix.isAbsolute(rel) || rel === '..' || rel.startsWith('../');
}

function healthcheckOf(raw: z.infer<typeof HealthcheckSchema>): Healthcheck {
  return {
    test: typeof raw.test === 'string' ? ['CMD-SHELL', raw.test] : raw.test,
    ...(raw.interval === undefined ? {} : { intervalMs: parseDurationMs(raw.interval) }),
    ...(raw.timeout === undefined ? {} : { timeoutMs: parseDurationMs(raw.timeout) }),
    ...(raw.retries === undefined ? {} : { retries: raw.retries }),
    ...(raw.start_period === undefined ? {} : { startPeriodMs: parseDurationMs(raw.start_period) }),
  };
}

function envOf(raw: z.infer<typeof EnvironmentSchema> | undefined): Record<string, string> {
  if (raw === undefined) return {};
  if (Array.isArray(raw)) {
    const out: Record<string, string> = {};
    for (const entry of raw) {
      const eq = entry.indexOf('=');
      // A bare NAME takes the value from the host's environment in compose; authbench passes no host values.
      if (eq > 0) out[entry.slice(0, eq)] = entry.slice(eq + 1);
    }
    return out;
  }
  return Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== null).map(([k, v]) => [k, String(v)]));
}

/** A string command is split on whitespace as compose does for the exec form (no shell). */
function argvOf(raw: string | string[]): string[] {
  return typeof raw === 'string' ? raw.trim().split(/\s+/) : raw;
}

function composeProblems(error: z.ZodError, file: string, prefix: readonly PropertyKey[], supported: readonly string[], isMain = false): Problem[] {
  const out: Problem[] = [];
  for (const issue of error.issues) {
    const path = [...prefix, ...issue.path];
    if (issue.code === 'unrecognized_keys') {
      const where = isMain && issue.path.length === 0 ? 'on the task container (main)' : 'by authbench';
      for (const key of issue.keys) {
        const list = issue.path.length === 0 ? ` (supported: ${supported.join(', ')})` : '';
        out.push(problem(file, fieldPath([...path, key]), `compose key not supported ${where}${list}`));
      }
    } else {
      out.push(problem(file, fieldPath(path), issue.message));
    }
  }
  return out;
}
