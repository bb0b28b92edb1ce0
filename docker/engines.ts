/**
 * More than one Docker engine from one process (`eval --engine URL[=SLOTS]`, repeatable): each
 * engine is a lane with its own rollout slots. Parsing is pure; connecting pings every engine
 * first, so an unreachable one is refused by name before any work starts.
 */
import { z } from 'zod';
import { AuthbenchError } from '../core/index.ts';
import { connectDocker, parseDockerHost, type DockerEngine } from './engine.ts';

export const EngineSpecSchema = z.object({
  /** A Docker endpoint as DOCKER_HOST takes it (unix, tcp with TLS, ssh). */
  host: z.string().min(1),
  /** Rollouts at once on this engine; absent: the caller's default (`-n`). */
  slots: z.number().int().positive().optional(),
});
export type EngineSpec = z.infer<typeof EngineSpecSchema>;

/** An engine and the rollouts it may run at once. */
export interface EngineLane<E = DockerEngine> {
  engine: E;
  slots: number;
}

/**
 * `URL[=SLOTS]`: the slot count is the part after the last `=` when it is digits (a URL's own `=`
 * never ends in one). The URL must be one parseDockerHost accepts. Pure; INVALID_ARGUMENT naming the flag.
 */
export function parseEngineSpec(text: string): EngineSpec {
  const m = /^(.*)=(\d+)$/.exec(text);
  const host = m === null ? text : (m[1] ?? '');
  const slots = m === null ? undefined : Number(m[2]);
  if (host === '') throw new AuthbenchError('INVALID_ARGUMENT', `--engine ${JSON.stringify(text)}: no engine URL`, { hint: 'URL[=SLOTS], e.g. --engine unix:///var/run/docker.sock=2' });
  if (slots !== undefined && slots < 1) throw new AuthbenchError('INVALID_ARGUMENT', `--engine ${text}: SLOTS must be at least 1`);
  try {
    parseDockerHost(host, {});
  } catch (e) {
    throw new AuthbenchError('INVALID_ARGUMENT', `--engine ${text}: ${e instanceof Error ? e.message : String(e)}`, {
      hint: 'URL[=SLOTS], e.g. --engine unix:///var/run/docker.sock=2 --engine ssh://me@build-1=4 --engine tcp://build-2:2376',
    });
  }
  return EngineSpecSchema.parse({ host, ...(slots === undefined ? {} : { slots }) });
}

/** Two specs naming one engine would run two lanes of slots against it: refused, naming it. Pure. */
export function checkDistinctEngines(specs: readonly EngineSpec[]): void {
  const seen = new Set<string>();
  for (const s of specs) {
    const endpoint = parseDockerHost(s.host, {}).endpoint;
    if (seen.has(endpoint)) throw new AuthbenchError('INVALID_ARGUMENT', `--engine ${endpoint} given twice: give its slot count once (URL=SLOTS)`);
    seen.add(endpoint);
  }
}

/**
 * Whether authbench's sandbox works on an engine, from what the engine says it is; an
 * AuthbenchError naming the engine when not, else undefined. Pure. Measured 2026-12-02 with
 * Debian's podman 4.3.1 (`podman system service`, rootful, catatonit installed, default ulimits
 * within the service's): images load and build through its Docker-compatible API, and inside its
 * containers Landlock (ABI 7), seccomp and strace all work — the oracle's episode ran fully
 * enforced and traced — but the validators' stray-process stop (`ab-launch --quarantine
 * --stop-strays`) refuses a PID 1 that is not Docker's init, and podman's is `podman-init`, so
 * every rollout would end as an infrastructure error at validation.
 */
export function engineSupport(endpoint: string, product: { name: string; version: string }): AuthbenchError | undefined {
  if (!/podman/i.test(product.name)) return undefined;
  return new AuthbenchError('SANDBOX_UNAVAILABLE', `the engine at ${endpoint} is ${product.name} ${product.version}: its containers take Landlock, seccomp and strace, but their init (podman-init) is refused by the validators' stray-process stop, so every rollout would end as an infrastructure error`, {
    hint: 'use a Docker engine there (dockerd); podman support needs the harness to accept podman-init as PID 1 (sandbox/launcher/ab-harness.c)',
  });
}

/** Throws engineSupport's error for an engine authbench's sandbox does not work on. */
export async function checkEngineSupported(engine: DockerEngine): Promise<void> {
  const refused = engineSupport(engine.endpoint, await engine.product());
  if (refused !== undefined) throw refused;
}

/**
 * Connect every engine (DOCKER_UNREACHABLE names the first that does not answer) and check the
 * sandbox works there (engineSupport); slots default to `defaultSlots`. Each engine loads what it lacks from the others (DockerEngine.loadFrom).
 */
export async function connectEngines(specs: readonly EngineSpec[], defaultSlots: number, runId?: string): Promise<EngineLane[]> {
  checkDistinctEngines(specs);
  const engines = await Promise.all(specs.map((s) => connectDocker({ host: s.host, ...(runId === undefined ? {} : { runId }) })));
  for (const engine of engines) await checkEngineSupported(engine);
  // An image one engine has (the offline base, the harness builder, a task image) is loaded into another rather than built again.
  for (const engine of engines) engine.loadFrom(engines);
  return engines.map((engine, i) => ({ engine, slots: specs[i]?.slots ?? defaultSlots }));
}
