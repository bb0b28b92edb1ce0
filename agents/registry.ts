/**
 * The installed agents authbench knows. Versions are exact and recorded; the
 * headless flags were read from each agent's own `--help` inside a built layer.
 * The API key variables hold a placeholder (`RELAY_KEY_PLACEHOLDER`): the
 * agents refuse to start without one, and the relay on the host swaps in the
 * real key, which never enters a container.
 */
import { AuthbenchError, compareStrings } from '../core/index.ts';
import { AgentAdapterSchema, type AgentAdapter } from './schema.ts';

/** Where a layer installs node and the agent (`bin/`, `lib/node_modules/`). */
export const AGENT_PREFIX = '/opt/authbench-agent';
/** The key the agents are given: not a secret, only what makes them start; the relay holds the real one. */
export const RELAY_KEY_PLACEHOLDER = 'sk-authbench-relay';
/** Where the agents keep their state: the task containers run as root. */
const HOME = '/root';

/** What every agent's runtime reads and runs: the prefix (node and the package). */
const PREFIX_GRANT = { read: [`${AGENT_PREFIX}/**`], execute: [`${AGENT_PREFIX}/**`] };
/** Node agents: Node reads OpenSSL's configuration at start-up and refuses to run without it. */
const NODE_GRANT = { ...PREFIX_GRANT, read: [...PREFIX_GRANT.read, '/etc/ssl/openssl.cnf'] };

/** Claude Code's state: its directory and its config file (rewritten through `.claude.json.tmp.*`, backed up, locked). */
const CLAUDE_STATE = [`${HOME}/.claude/**`, `${HOME}/.claude.json*`];

const ADAPTERS: readonly AgentAdapter[] = [
  {
    name: 'claude-code',
    description: 'Anthropic Claude Code (`claude -p`, stream-json events)',
    install: { package: '@anthropic-ai/claude-code', version: '2.1.332', before: '2026-11-26T00:00:00Z', bin: 'claude', runtime: 'native' },
    // `--` before the instruction: one starting with `-` would otherwise be read as an option.
    headless: ['claude', '-p', '--model', '{model}', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions', '--', '{instruction}'],
    env: {
      ANTHROPIC_BASE_URL: '{relay}',
      ANTHROPIC_API_KEY: RELAY_KEY_PLACEHOLDER,
      // Nothing but the model calls should leave: no update checks, telemetry or error reports.
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      // Claude Code refuses --dangerously-skip-permissions as root unless it is told it runs in a sandbox; task containers run as root.
      IS_SANDBOX: '1',
      // Its background calls (titles, summaries) go to a "small fast" model: the run's model, the one the relay serves.
      ANTHROPIC_DEFAULT_HAIKU_MODEL: '{model}',
      ANTHROPIC_SMALL_FAST_MODEL: '{model}',
    },
    promptsOff: {
      flags: ['--dangerously-skip-permissions'],
      why: 'skips every tool-permission prompt (file edits, shell commands); the enforced policy is the boundary',
    },
    stateDirs: [`${HOME}/.claude`],
    // It reads back the state it writes (its config, session log, shell snapshot): refused, every turn logs denials and the session log is lost.
    runtimeGrant: { ...PREFIX_GRANT, read: [...PREFIX_GRANT.read, ...CLAUDE_STATE], write: CLAUDE_STATE },
    // Its Bash tool: `{command, timeout?}`, the timeout in milliseconds.
    shellTool: { name: 'Bash', command: 'command', timeout: { arg: 'timeout', unit: 'ms' } },
    transcript: 'claude-code-stream-json',
    scriptedModel: 'claude-sonnet-4-5',
  },
  {
    name: 'codex',
    description: 'OpenAI Codex CLI (`codex exec`, JSON events)',
    install: { package: '@openai/codex', version: '0.171.0', before: '2026-11-22T00:00:00Z', bin: 'codex', runtime: 'node' },
    // Codex 0.171 ignores OPENAI_BASE_URL for its built-in provider (it dials api.openai.com, WebSocket first):
    // a provider of its own, configured on the command line, sends it to the relay over plain HTTP.
    headless: [
      'codex', 'exec', '--json', '--skip-git-repo-check', '--model', '{model}', '--dangerously-bypass-approvals-and-sandbox',
      '-c', 'model_provider="authbench"', '-c', 'model_providers.authbench.name="authbench"', '-c', 'model_providers.authbench.base_url="{relay}/v1"',
      '-c', 'model_providers.authbench.env_key="OPENAI_API_KEY"', '-c', 'model_providers.authbench.wire_api="responses"',
      '--', '{instruction}',
    ],
    env: { OPENAI_BASE_URL: '{relay}/v1', OPENAI_API_KEY: RELAY_KEY_PLACEHOLDER },
    promptsOff: {
      flags: ['--dangerously-bypass-approvals-and-sandbox'],
      why: 'no approval prompts and no Codex sandbox of its own (its Landlock/seccomp would nest inside ours); the enforced policy is the boundary',
    },
    stateDirs: [`${HOME}/.codex`],
    runtimeGrant: { ...NODE_GRANT, write: [`${HOME}/.codex/**`] },
    // Its unified exec tool: `{cmd, …}` (no timeout argument; it yields output after `yield_time_ms`).
    shellTool: { name: 'exec_command', command: 'cmd' },
    transcript: 'codex-exec-json',
    scriptedModel: 'gpt-5',
  },
  {
    name: 'openclaw',
    description: 'OpenClaw, AuthBench’s own executor (`openclaw agent exec`)',
    install: { package: 'openclaw', version: '2026.9.6', before: '2026-09-26T00:00:00Z', bin: 'openclaw', runtime: 'node' },
    // `agent exec` is its documented headless entry (docs/cli/agent.md in the package): one embedded turn, no gateway.
    headless: ['openclaw', 'agent', 'exec', '--isolated', '--auth-env-only', '--json', '--model', '{model}', '--', '{instruction}'],
    env: { OPENAI_BASE_URL: '{relay}/v1', OPENAI_API_KEY: RELAY_KEY_PLACEHOLDER, ANTHROPIC_BASE_URL: '{relay}', ANTHROPIC_API_KEY: RELAY_KEY_PLACEHOLDER },
    promptsOff: {
      flags: ['--isolated'],
      why: 'exec defaults only: OpenClaw’s own agent sandbox off and the full exec policy (no exec-approval prompts or reviewer); `--auth-env-only` keeps it to the placeholder keys; the enforced policy is the boundary',
    },
    stateDirs: [`${HOME}/.openclaw`],
    runtimeGrant: { ...NODE_GRANT, write: [`${HOME}/.openclaw/**`] },
  },
].map((a) => AgentAdapterSchema.parse(a));

export function listAgents(): readonly AgentAdapter[] {
  return [...ADAPTERS].sort((a, b) => compareStrings(a.name, b.name));
}

/** The adapter of `--agent NAME`; an unknown name is the user's error (exit 1) and lists the known ones. */
export function getAgent(name: string): AgentAdapter {
  const found = ADAPTERS.find((a) => a.name === name);
  if (found === undefined) {
    throw new AuthbenchError('INVALID_ARGUMENT', `unknown agent "${name}"`, { hint: `known agents: ${listAgents().map((a) => a.name).join(', ')}` });
  }
  return found;
}
