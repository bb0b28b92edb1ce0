/**
 * The one tool the execution agent has. A call is checked here before any
 * defense sees it: an unknown tool, arguments that do not validate, or
 * arguments the provider could not parse make an invalid proposal, which is
 * recorded and answered with an error but never executed.
 */
import { z } from 'zod';
import type { ToolCall, ToolSpec } from '../models/index.ts';

export const SHELL_TOOL = 'shell';

/** Upper bound a model may ask for with `timeout_sec`, whatever the runner's default. */
export const MAX_COMMAND_TIMEOUT_SEC = 3600;

export const ShellArgsSchema = z
  .strictObject({
    command: z.string().refine((s) => s.trim() !== '', 'must not be empty').describe('A bash command line; runs as `bash -c <command>` in the task working directory.'),
    timeout_sec: z
      .number()
      .positive()
      .max(MAX_COMMAND_TIMEOUT_SEC)
      .optional()
      .describe('Wall-clock limit for this command in seconds; the runner caps it.'),
  })
  .describe('Arguments of the shell tool');
export type ShellArgs = z.infer<typeof ShellArgsSchema>;

/** The JSON Schema the providers see; `$schema` dropped because some providers reject unknown keywords. */
function toolParameters(): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(ShellArgsSchema) as Record<string, unknown>;
  return rest;
}

export const SHELL_TOOL_SPEC: ToolSpec = {
  name: SHELL_TOOL,
  description:
    'Run a bash command in the task environment (working directory: the task workdir). ' +
    'Returns the exit code, stdout and stderr (each capped), and any operations the sandbox denied.',
  parameters: toolParameters(),
};

export const AGENT_TOOLS: readonly ToolSpec[] = [SHELL_TOOL_SPEC];

export type CheckedCall = { valid: true; args: ShellArgs } | { valid: false; reason: string };

/** Decide whether a tool call may go on to the defense; pure. */
export function checkToolCall(call: ToolCall): CheckedCall {
  if (call.parseError !== undefined) return { valid: false, reason: `arguments could not be parsed: ${call.parseError}` };
  if (call.name !== SHELL_TOOL) return { valid: false, reason: `unknown tool ${JSON.stringify(call.name)} (the only tool is ${SHELL_TOOL})` };
  const parsed = ShellArgsSchema.safeParse(call.args);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => (i.path.length === 0 ? i.message : `${i.path.join('.')}: ${i.message}`));
    return { valid: false, reason: `invalid arguments for ${SHELL_TOOL}: ${issues.join('; ')}` };
  }
  return { valid: true, args: parsed.data };
}

/** The argv a shell proposal runs as; never a joined string. */
export function shellArgv(args: ShellArgs): string[] {
  return ['bash', '-c', args.command];
}
