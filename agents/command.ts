/**
 * How an installed agent is run inside its layer: the headless argv for one
 * instruction and its environment, and the `--version` probe. Pure; the argv
 * stays an array (the instruction is one element, never spliced into a shell
 * string).
 */
import { AuthbenchError } from '../core/index.ts';
import { AGENT_PREFIX } from './registry.ts';
import type { AgentAdapter } from './schema.ts';

export interface HeadlessInput {
  instruction: string;
  model: string;
  /** The relay the agent calls instead of its provider, as the container reaches it (e.g. `http://127.0.0.1:4000`). */
  relayUrl: string;
}

export interface AgentCommand {
  argv: string[];
  env: Record<string, string>;
}

/** The prefix's `bin/` first: npm shims start with `#!/usr/bin/env node`, and task images have no node of their own. */
function runtimeEnv(): Record<string, string> {
  return { PATH: `${AGENT_PREFIX}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin` };
}

/** The argv that starts the agent's bin: through the layer's node for a Node script (no shebang lookup through /usr/bin/env). */
function launch(adapter: AgentAdapter): string[] {
  const bin = `${AGENT_PREFIX}/bin/${adapter.install.bin}`;
  return adapter.install.runtime === 'node' ? [`${AGENT_PREFIX}/bin/node`, bin] : [bin];
}

export function headlessCommand(adapter: AgentAdapter, input: HeadlessInput): AgentCommand {
  if (!/^https?:\/\/[^\s/]+/.test(input.relayUrl)) {
    throw new AuthbenchError('INVALID_ARGUMENT', `relay URL must be http(s)://host[:port], got "${input.relayUrl}"`);
  }
  const relay = input.relayUrl.replace(/\/+$/, '');
  // The model first: an instruction may hold `{model}` literally and must reach the agent as written.
  const fill = (s: string): string => s.replaceAll('{relay}', relay).replaceAll('{model}', input.model).replaceAll('{instruction}', input.instruction);
  const [, ...rest] = adapter.headless;
  const argv = [...launch(adapter), ...rest.map(fill)];
  const env = Object.fromEntries(Object.entries(adapter.env).map(([k, v]) => [k, v.replaceAll('{relay}', relay).replaceAll('{model}', input.model)]));
  return { argv, env: { ...runtimeEnv(), ...env } };
}

/** `<agent> --version` from inside the layer: proof the install runs. */
export function versionCommand(adapter: AgentAdapter): AgentCommand {
  return { argv: [...launch(adapter), '--version'], env: runtimeEnv() };
}
