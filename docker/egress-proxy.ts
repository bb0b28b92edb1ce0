/**
 * A rollout's filtering egress proxy: the one way a task container reaches
 * the external hosts its task.toml allowlists. The task container sits on an
 * internal network of its own with the proxy (no gateway: a program that
 * ignores the proxy settings has no route at all); the proxy also joins an
 * upstream network with egress (Docker's default bridge) and forwards only
 * to the hosts of its rules (docker/egress-proxy-script.ts). Labelled and
 * owned like sidecars, and removed with the rollout, on errors too.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { AuthbenchError } from '../core/index.ts';
import { BASE_IMAGE_REF } from './base-images.ts';
import { EGRESS_PROXY_SCRIPT } from './egress-proxy-script.ts';
import type { Container, Engine } from './types.ts';

/** The proxy's name on the task container's egress network. */
export const EGRESS_PROXY_HOST = 'authbench-egress';
/** Where it listens: a task's policy must grant this port (taskenv/egress.ts). */
export const EGRESS_PROXY_PORT = 3128;

const LOG_PATH = '/tmp/authbench-egress.jsonl';
const READY_PATH = '/tmp/authbench-egress.ready';
const DEFAULT_READY_TIMEOUT_MS = 30_000;

/** One host the proxy forwards to (lower case); `ports` undefined = any port. */
export const EgressRuleSchema = z.strictObject({ host: z.string().min(1), ports: z.array(z.number().int().min(1).max(65535)).optional() });
export type EgressRule = z.infer<typeof EgressRuleSchema>;

/** One line of the proxy's log: what it did with one request. */
export const EgressDecisionSchema = z.object({
  verdict: z.enum(['allowed', 'refused', 'failed', 'error']).describe('allowed: forwarded; refused: 403; failed: allowed but unreachable (502); error: not a proxy request (400)'),
  method: z.string().optional(),
  host: z.string().optional(),
  port: z.number().int().optional(),
  reason: z.string().optional(),
  t: z.number().describe('Unix time, seconds'),
});
export type EgressDecision = z.infer<typeof EgressDecisionSchema>;

export interface EgressProxyPlan {
  rules: readonly EgressRule[];
  /** authbench.task / authbench.run labels, put on the network and the proxy. */
  labels: Readonly<Record<string, string>>;
  /** The network with egress the proxy forwards through (default Docker's `bridge`; tests use one of their own). */
  upstream?: string;
  /** Default: the offline base image (it has python3). */
  image?: string;
  readyTimeoutMs?: number;
}

export interface EgressProxy {
  /** The internal network the task container joins (its only route). */
  network: string;
  /** The rules in force. */
  rules: readonly EgressRule[];
  /** What the proxy did so far, in order. */
  decisions(): Promise<EgressDecision[]>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** The proxy's command line: its program and its configuration. Pure. */
export function egressProxyCommand(rules: readonly EgressRule[], port = EGRESS_PROXY_PORT): { entrypoint: string[]; command: string[] } {
  const config = { bind: EGRESS_PROXY_HOST, port, rules: rules.map((r) => ({ host: r.host.toLowerCase(), ports: r.ports ?? null })), log: LOG_PATH, ready: READY_PATH };
  return { entrypoint: ['python3', '-c', EGRESS_PROXY_SCRIPT], command: [JSON.stringify(config)] };
}

/**
 * The environment that points a task's programs at the proxy: both spellings, as curl reads
 * only the lower-case `http_proxy`. `direct` (sidecars, loopback) bypasses it. Pure.
 */
export function egressProxyEnv(direct: readonly string[], host = EGRESS_PROXY_HOST, port = EGRESS_PROXY_PORT): Record<string, string> {
  const url = `http://${host}:${String(port)}`;
  const noProxy = [...new Set(['localhost', '127.0.0.1', '::1', ...direct])].join(',');
  const env: Record<string, string> = {};
  for (const [name, value] of [
    ['http_proxy', url],
    ['https_proxy', url],
    ['no_proxy', noProxy],
  ] as const) {
    env[name] = value;
    env[name.toUpperCase()] = value;
  }
  return env;
}

/** The proxy's log lines; a line that is not a decision (cut by a read mid-write) is skipped. Pure. */
export function parseEgressLog(text: string): EgressDecision[] {
  const out: EgressDecision[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    const parsed = EgressDecisionSchema.safeParse(value);
    if (parsed.success) out.push(parsed.data);
  }
  return out;
}

/** Create the egress network, start the proxy on it and the upstream network, and wait until it listens. */
export async function startEgressProxy(engine: Engine, plan: EgressProxyPlan): Promise<EgressProxy> {
  if (engine.createNetwork === undefined || engine.removeNetwork === undefined)
    throw new AuthbenchError('INTERNAL', 'this engine cannot create networks, which the egress proxy needs');
  const removeNetwork = engine.removeNetwork.bind(engine);
  const image = plan.image ?? BASE_IMAGE_REF;
  if ((await engine.imageInfo(image)) === undefined)
    throw new AuthbenchError('IMAGE_NOT_FOUND', `image ${image} of the egress proxy does not exist locally`, { hint: 'build it with `authbench base build`' });
  const network = `authbench-net-${randomBytes(6).toString('hex')}-egress`;
  let container: Container | undefined;
  let created = false;
  const dispose = async (): Promise<void> => {
    // The container first: Docker refuses to remove a network in use.
    try {
      await container?.remove();
    } finally {
      if (created) await removeNetwork(network);
    }
  };
  try {
    await engine.createNetwork(network, plan.labels);
    created = true;
    const { entrypoint, command } = egressProxyCommand(plan.rules);
    container = await engine.startContainer({
      image,
      labels: { ...plan.labels, 'authbench.service': EGRESS_PROXY_HOST },
      network: { name: network, aliases: [EGRESS_PROXY_HOST] },
      // No alias upstream: Docker's default bridge refuses them.
      extraNetworks: [{ name: plan.upstream ?? 'bridge' }],
      process: { entrypoint, command },
      memoryBytes: 256 * 1024 * 1024,
      pidsLimit: 512,
    });
    await waitListening(container, plan.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS);
  } catch (e) {
    await dispose().catch(() => undefined);
    throw e;
  }
  const started = container;
  return {
    network,
    rules: plan.rules,
    decisions: async () => parseEgressLog((await started.readFile(LOG_PATH))?.toString('utf8') ?? ''),
    [Symbol.asyncDispose]: dispose,
  };
}

/** The proxy writes its ready file once it listens; exiting first, or never listening, is SIDECAR_FAILED (it is one, authbench's own). */
async function waitListening(container: Container, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if ((await container.readFile(READY_PATH)) !== undefined) return;
    const state = await container.state?.();
    if (state !== undefined && state.status !== 'running' && state.status !== 'created')
      throw new AuthbenchError('SIDECAR_FAILED', `the egress proxy exited (code ${String(state.exitCode)}) before it listened`, { hint: 'its container logs tell why' });
    if (Date.now() >= deadline) throw new AuthbenchError('SIDECAR_FAILED', `the egress proxy was not listening after ${String(Math.round(timeoutMs / 1000))} s`);
    await new Promise<void>((r) => setTimeout(r, 100));
  }
}
