/**
 * Who answers an installed agent's model calls in an eval: a scripted model
 * (its `shell` turns become the agent's shell-tool calls through the relay),
 * or a provider reached by the relay's upstream backend with the host's key —
 * the agent's own request forwarded, so the key stays on the host. Which
 * provider an agent can talk to follows from the API it speaks (its base-URL
 * variables in the adapter's environment).
 */
import { AuthbenchError } from '../core/index.ts';
import { loadModelEnv, parseModelRef, type ApiProvider, type ModelRef } from '../models/index.ts';
import { upstreamBackend, type RelayBackend } from '../models/relay/index.ts';
import type { AgentAdapter } from './schema.ts';
import { agentShellMapping } from './shell-tool.ts';

/** The providers whose API an agent speaks, from the base URLs its environment points at the relay. Pure. */
export function agentProviders(adapter: Pick<AgentAdapter, 'env'>): ApiProvider[] {
  const out: ApiProvider[] = [];
  if ('ANTHROPIC_BASE_URL' in adapter.env) out.push('anthropic');
  if ('OPENAI_BASE_URL' in adapter.env) out.push('openai', 'openai-compatible');
  return out;
}

/**
 * The model name the agent is told (and the only one the relay serves): a scripted model's stand-in
 * name from the adapter, else the provider's model name. INVALID_ARGUMENT (exit 1) when the agent
 * cannot be driven by it: a scripted model needs the agent's shell tool mapped; a provider must be
 * one whose API the agent speaks. Pure.
 */
export function agentModelName(adapter: AgentAdapter, model: string | ModelRef): string {
  const ref = typeof model === 'string' ? parseModelRef(model) : model;
  if (ref.provider === 'scripted') {
    agentShellMapping(adapter);
    if (adapter.scriptedModel === undefined) {
      throw new AuthbenchError('INVALID_ARGUMENT', `agent ${adapter.name}: no model name to tell it when a scripted model drives it`, { hint: 'add `scriptedModel` to its adapter (agents/registry.ts)' });
    }
    return adapter.scriptedModel;
  }
  const speaks = agentProviders(adapter);
  if (!speaks.includes(ref.provider)) {
    throw new AuthbenchError('INVALID_ARGUMENT', `agent ${adapter.name} cannot use --model ${ref.provider}/${ref.name}: it speaks the ${speaks.join(' / ') || 'no known'} API`, {
      hint: `give a ${speaks[0] ?? 'scripted'}/… model, or a scripted one`,
    });
  }
  return ref.name;
}

/** The relay's upstream backend for a provider model, with the host's key (read here, on the host). */
export async function providerBackend(model: string, options: { baseUrl?: string; timeoutMs?: number } = {}): Promise<RelayBackend> {
  const ref = parseModelRef(model);
  if (ref.provider === 'scripted') throw new AuthbenchError('INTERNAL', `providerBackend: ${model} is scripted`);
  return upstreamBackend({ provider: ref.provider, env: await loadModelEnv(), ...(options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl }), ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }) });
}
