/**
 * `<agent> --version` in a throwaway container of a layer: the proof that an
 * install runs, outside any sandbox (the enforced run is the sandbox
 * session's job). The container is labelled and removed whatever happens.
 */
import { AuthbenchError } from '../core/index.ts';
import { LABELS, type Engine } from '../docker/index.ts';
import { versionCommand } from './command.ts';
import type { AgentAdapter } from './schema.ts';

export async function agentVersion(engine: Engine, image: string, adapter: AgentAdapter, runId: string): Promise<string> {
  await using container = await engine.startContainer({ image, labels: { [LABELS.run]: runId }, network: 'none' });
  const { argv, env } = versionCommand(adapter);
  const r = await container.exec({ cmd: argv, env, timeoutMs: 60_000 });
  if (r.exitCode !== 0) {
    throw new AuthbenchError('IMAGE_BUILD_FAILED', `agent ${adapter.name} is installed in ${image} but \`${adapter.install.bin} --version\` failed (exit ${String(r.exitCode)})`, {
      details: [...r.stderr.split('\n'), ...r.stdout.split('\n')].filter((l) => l.trim() !== '').slice(-10),
    });
  }
  return r.stdout.trim();
}
