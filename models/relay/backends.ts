import { AuthbenchError } from '../../core/index.ts';
import { API_KEY_ENV, resolveApiKey, resolveBaseUrl } from '../index.ts';
import type { ApiProvider, ModelEnv, ModelRequest, ModelResponse, Provider, ToolCall } from '../index.ts';
import { isPlainObject, isRefusal } from './wire.ts';
import type { ApiCodec, DecodedRequest, Refusal, RelayApi, RelayReply } from './wire.ts';

/** One call the relay hands its backend: the client's body as sent and its decoded form. */
export interface RelayCall {
  api: RelayApi;
  codec: ApiCodec;
  decoded: DecodedRequest;
  body: Record<string, unknown>;
  /** The client's headers, lower case; a backend forwards only what its codec allows. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
}

export type BackendResult =
  | { kind: 'reply'; reply: RelayReply }
  /** The provider's own error, passed to the client with its status (key redacted by the relay). */
  | { kind: 'upstream_error'; status: number; body: string; message: string }
  | { kind: 'refusal'; refusal: Refusal };

export interface RelayBackend {
  readonly source: 'upstream' | 'scripted';
  /** Pricing lookups and cache keys: `provider/name` and the endpoint. */
  readonly provider: Provider;
  readonly endpoint: string | null;
  /** Strings that must never leave the relay (the API key). */
  readonly secrets: readonly string[];
  supports(api: RelayApi): boolean;
  answer(call: RelayCall, signal: AbortSignal): Promise<BackendResult>;
}

export interface UpstreamOptions {
  provider: ApiProvider;
  /** Provider endpoint ending in `/v1`; else its environment variable, else the provider default. */
  baseUrl?: string;
  /** Where the key and endpoint are read from (the models module's environment). */
  env: ModelEnv;
  /** Per-request timeout. */
  timeoutMs?: number;
}

const UPSTREAM_APIS: Readonly<Record<ApiProvider, readonly RelayApi[]>> = {
  openai: ['openai-chat', 'openai-responses'],
  // Whether an OpenAI-compatible server has Responses is its own to say: its 404 reaches the client as sent.
  'openai-compatible': ['openai-chat', 'openai-responses'],
  anthropic: ['anthropic-messages'],
};

/**
 * Forwards the client's own body (made non-streaming) to the provider with
 * the host's key; the client's credentials are never forwarded. The relay
 * re-streams the reply itself, so one decoded answer serves the record, the
 * budget, the cache and the client alike.
 */
export function upstreamBackend(options: UpstreamOptions): RelayBackend {
  const ref = { provider: options.provider, name: 'relay' };
  const baseUrl = resolveBaseUrl(ref, options.baseUrl, options.env);
  const key = resolveApiKey(options.provider, options.env);
  if (key === undefined && options.provider !== 'openai-compatible') {
    throw new AuthbenchError('INVALID_ARGUMENT', `model relay: ${API_KEY_ENV[options.provider]} is not set`, {
      hint: `export ${API_KEY_ENV[options.provider]}=... or put it in a .env file in the working directory`,
    });
  }
  const timeoutMs = options.timeoutMs ?? 600_000;
  return {
    source: 'upstream',
    provider: options.provider,
    endpoint: baseUrl,
    secrets: key === undefined ? [] : [key],
    supports: (api) => UPSTREAM_APIS[options.provider].includes(api),
    async answer(call, signal) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      for (const name of call.codec.forwardHeaders) {
        const v = call.headers[name];
        if (typeof v === 'string') headers[name] = v;
      }
      if (key !== undefined) Object.assign(headers, call.codec.authHeaders(key));
      let res: Response;
      let text: string;
      try {
        res = await fetch(`${baseUrl}${call.codec.upstreamPath}`, {
          method: 'POST',
          headers,
          body: JSON.stringify(call.codec.upstreamBody(call.body)),
          signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
        });
        text = await res.text();
      } catch (e) {
        return { kind: 'refusal', refusal: { kind: 'upstream_unreachable', message: `the model provider is unreachable: ${(e as Error).message}` } };
      }
      if (!res.ok) return { kind: 'upstream_error', status: res.status, body: text, message: `the provider answered HTTP ${res.status}` };
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        return { kind: 'refusal', refusal: { kind: 'upstream_unreachable', message: 'the model provider answered with something that is not JSON' } };
      }
      const reply = call.codec.decodeUpstream(json);
      return isRefusal(reply) ? { kind: 'refusal', refusal: reply } : { kind: 'reply', reply };
    },
  };
}

/** A scripted answer to a call; a throw becomes a 500 in the API's format, recorded. */
export type ScriptedResponder = (call: RelayCall) => RelayReply | Promise<RelayReply>;

export function scriptedBackend(respond: ScriptedResponder): RelayBackend {
  return {
    source: 'scripted',
    provider: 'scripted',
    endpoint: null,
    secrets: [],
    supports: () => true,
    async answer(call) {
      try {
        return { kind: 'reply', reply: await respond(call) };
      } catch (e) {
        return { kind: 'refusal', refusal: { kind: 'backend_error', message: `scripted model failed: ${(e as Error).message}` } };
      }
    },
  };
}

/**
 * How one of authbench's tools maps onto a tool an installed agent declares:
 * the scripted models call `shell` with `{command, timeout_sec?}`; Claude Code
 * offers `Bash` with `{command, timeout?}` (milliseconds).
 */
export interface ToolMapping {
  /** The tool name the authbench model uses. */
  modelTool: string;
  /** The tool name the agent declared. */
  agentTool: string;
  /** The model's arguments → the agent's. */
  toAgent(args: unknown): Record<string, unknown>;
  /** The agent's arguments (in its transcript) → the model's. */
  toModel(args: unknown): unknown;
}

export const CLAUDE_CODE_BASH: ToolMapping = {
  modelTool: 'shell',
  agentTool: 'Bash',
  toAgent: (args) => {
    const a = isPlainObject(args) ? args : {};
    return { command: a['command'], ...(typeof a['timeout_sec'] === 'number' ? { timeout: Math.round(a['timeout_sec'] * 1000) } : {}) };
  },
  toModel: (args) => {
    const a = isPlainObject(args) ? args : {};
    return { command: a['command'], ...(typeof a['timeout'] === 'number' ? { timeout_sec: a['timeout'] / 1000 } : {}) };
  },
};

/** What the adapter needs of an agent model (agent/loop.ts's AgentModel fits). */
export interface TurnModel {
  complete(request: ModelRequest): Promise<ModelResponse>;
}

function renameCall(call: ToolCall, byName: ReadonlyMap<string, ToolMapping>, dir: 'toModel' | 'toAgent'): ToolCall {
  const m = byName.get(call.name);
  if (m === undefined) return call;
  return dir === 'toModel' ? { ...call, name: m.modelTool, args: m.toModel(call.args) } : { id: call.id, name: m.agentTool, args: m.toAgent(call.args) };
}

/** The agent's request as the model knows it: the agent's tools under the model's names and argument shapes. */
export function requestForModel(request: ModelRequest, mappings: readonly ToolMapping[]): ModelRequest {
  const byAgent = new Map(mappings.map((m) => [m.agentTool, m]));
  return {
    ...request,
    tools: request.tools.map((t) => ({ ...t, name: byAgent.get(t.name)?.modelTool ?? t.name })),
    messages: request.messages.map((m) => {
      if (m.role === 'assistant' && m.toolCalls !== undefined) return { ...m, toolCalls: m.toolCalls.map((c) => renameCall(c, byAgent, 'toModel')) };
      if (m.role === 'tool') return { ...m, toolName: byAgent.get(m.toolName)?.modelTool ?? m.toolName };
      return m;
    }),
  };
}

/**
 * A turn of an authbench model (a scripted one, typically) as the reply an
 * installed agent expects: its tool calls renamed and reshaped to the agent's
 * declared tools. A call for a tool the agent did not declare fails the
 * exchange rather than reaching an agent that cannot run it.
 */
export function agentModelResponder(model: TurnModel, mappings: readonly ToolMapping[]): ScriptedResponder {
  const byModel = new Map(mappings.map((m) => [m.modelTool, m]));
  return async (call) => {
    const declared = new Set(call.decoded.request.tools.map((t) => t.name));
    const response = await model.complete(requestForModel(call.decoded.request, mappings));
    const toolCalls = response.toolCalls.map((c) => renameCall(c, byModel, 'toAgent'));
    const undeclared = toolCalls.find((c) => !declared.has(c.name));
    if (undeclared !== undefined) {
      throw new AuthbenchError('INVALID_ARGUMENT', `the model called ${JSON.stringify(undeclared.name)}, which the agent did not declare`, {
        hint: `declared: ${[...declared].join(', ') || 'no tools'}`,
      });
    }
    return { text: response.text, toolCalls, finishReason: response.finishReason, usage: response.usage };
  };
}
