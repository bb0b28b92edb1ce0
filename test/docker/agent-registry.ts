/**
 * What the Docker tests that build agent layers share (agents, installed-agent, eval-agent): the
 * layer build needs the npm registry, and the decision is explicit — in a Docker test tier
 * (AUTHBENCH_TEST_TIER) or under CI the registry is required and an unreachable one fails the
 * build, naming the agent and the step; in a bare local run the suite is skipped, visibly, when
 * the host cannot reach it. And the CA builds trust: $AUTHBENCH_BUILD_CA when set, else the
 * certificates the host added to its trust store (where a TLS-intercepting proxy's CA goes); the
 * whole system bundle does not fit in a build arg (one environment string, 128 KiB at most).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ENV, readEnv } from '../../core/index.ts';
import { certificatesOf, type BuildHostAccess } from '../../docker/index.ts';

const REGISTRY = 'https://registry.npmjs.org/';
const ADDED_CERTIFICATES = '/usr/local/share/ca-certificates';

/** A test tier or CI requires the registry; a bare local run may skip without it. */
export const REGISTRY_REQUIRED = readEnv(ENV.AUTHBENCH_TEST_TIER) !== undefined || readEnv(ENV.CI) !== undefined;

async function registryReachable(): Promise<boolean> {
  try {
    return (await fetch(`${REGISTRY}npm`, { method: 'HEAD', signal: AbortSignal.timeout(10_000) })).ok;
  } catch {
    return false;
  }
}

/** Skip the agent-layer tests: only in a bare local run whose host cannot reach the registry. */
export async function skipAgentLayers(): Promise<boolean> {
  return !REGISTRY_REQUIRED && !(await registryReachable());
}

/** The PEM text of the CA builds should trust (undefined: none to add) and where it came from. */
export async function hostBuildCaText(): Promise<{ text: string; source: string } | undefined> {
  const file = readEnv(ENV.AUTHBENCH_BUILD_CA);
  if (file !== undefined) return { text: await readFile(file, 'utf8'), source: file };
  const names = (await readdir(ADDED_CERTIFICATES).catch(() => [] as string[])).filter((n) => n.endsWith('.crt')).sort();
  if (names.length === 0) return undefined;
  return { text: (await Promise.all(names.map((n) => readFile(join(ADDED_CERTIFICATES, n), 'utf8')))).join('\n'), source: ADDED_CERTIFICATES };
}

/** The same, as the build access the layer builds take. */
export async function hostBuildCa(): Promise<BuildHostAccess> {
  const ca = await hostBuildCaText();
  return ca === undefined ? {} : { caBundle: certificatesOf(ca.text, ca.source) };
}
