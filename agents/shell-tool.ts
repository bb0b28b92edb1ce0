/**
 * An authbench model's `shell` tool as an installed agent's own shell tool,
 * from the adapter's data: what lets a scripted model (scripted/replay, the
 * positive controls) drive the agent through the relay — its `shell` calls
 * reach the agent as the agent's tool calls, and the agent's calls and
 * results go back to it as `shell` ones. Pure.
 */
import { AuthbenchError } from '../core/index.ts';
import type { ToolMapping } from '../models/relay/index.ts';
import type { AgentAdapter, ShellTool } from './schema.ts';

/** The shell tool of authbench's own models (agent/tools.ts): `{command, timeout_sec?}`. */
export const MODEL_SHELL_TOOL = 'shell';

const record = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

export function shellToolMapping(tool: ShellTool): ToolMapping {
  const scale = tool.timeout?.unit === 'ms' ? 1000 : 1;
  return {
    modelTool: MODEL_SHELL_TOOL,
    agentTool: tool.name,
    toAgent: (args) => {
      const a = record(args);
      const seconds = a['timeout_sec'];
      return {
        [tool.command]: a['command'],
        ...(tool.timeout !== undefined && typeof seconds === 'number' ? { [tool.timeout.arg]: Math.round(seconds * scale) } : {}),
      };
    },
    toModel: (args) => {
      const a = record(args);
      const timeout = tool.timeout === undefined ? undefined : a[tool.timeout.arg];
      return { command: a[tool.command], ...(typeof timeout === 'number' ? { timeout_sec: timeout / scale } : {}) };
    },
  };
}

/** The adapter's shell tool mapping; an adapter without one cannot be driven by an authbench model yet. */
export function agentShellMapping(adapter: AgentAdapter): ToolMapping {
  if (adapter.shellTool === undefined) {
    throw new AuthbenchError('INVALID_ARGUMENT', `agent ${adapter.name}: its shell tool is not mapped, so no authbench model can drive it yet`, {
      hint: 'add `shellTool` to its adapter (agents/registry.ts)',
    });
  }
  return shellToolMapping(adapter.shellTool);
}
