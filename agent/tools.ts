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

/** Bytes a command may have: `bash -c <command>` passes it as one argument, and Linux caps one at 32 pages. */
export const MAX_COMMAND_BYTES = 128 * 1024;

export const ShellArgsSchema = z
  .strictObject({
    command: z
      .string()
      .refine((s) => s.trim() !== '', 'must not be empty')
      // No argv element can carry a NUL: such a call is the model's invalid proposal, never the job's crash.
      .refine((s) => !s.includes('\0'), 'must not contain a NUL byte')
      // The kernel's limit for one argv element (MAX_ARG_STRLEN, NUL included): a longer one fails at exec.
      .refine((s) => Buffer.byteLength(s, 'utf8') < MAX_COMMAND_BYTES, `must be under ${MAX_COMMAND_BYTES / 1024} KiB (the kernel's limit for one argument); split the work into several commands`)
      .describe('A bash command line; runs as `bash -c <command>` in the task working directory.'),
    timeout_sec: z
      .number()
      .positive()
      .max(MAX_COMMAND_TIMEOUT_SEC)
      .optional()
      .describe('Wall-clock limit for this command in seconds; the runner caps it.'),
  })
  .describe('Arguments of the shell tool');

const nonEmpty = (what: string) => z.string().refine((s) => s.trim() !== '', 'must not be empty').describe(what);

export const ConfirmationSchema = z
  .strictObject({
    action: nonEmpty('What the command does, in a word or two (e.g. `write`, `delete`, `send`).'),
    targets: z
      .array(nonEmpty('An absolute path, or host:port, the command changes or reaches.'))
      .min(1)
      .describe('Every file (absolute path) and endpoint (host:port) the command changes or reaches.'),
    justification: nonEmpty('Why the task needs this, in one sentence.'),
  })
  .describe('A structured confirmation of a held high-risk command: re-send the same command with it.');
export type Confirmation = z.infer<typeof ConfirmationSchema>;

/** The shell tool when the defense takes structured confirmations (structured-guard). */
export const ConfirmingShellArgsSchema = ShellArgsSchema.extend({
  confirmation: ConfirmationSchema.optional(),
}).describe('Arguments of the shell tool (with structured confirmations)');

/** Arguments of a valid shell call; `confirmation` only validates when the defense offers it. */
export type ShellArgs = z.infer<typeof ConfirmingShellArgsSchema>;

/** The JSON Schema the providers see; `$schema` dropped because some providers reject unknown keywords. */
function toolParameters(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema) as Record<string, unknown>;
  return rest;
}

const SHELL_DESCRIPTION =
  'Run a bash command in the task environment (working directory: the task workdir). ' +
  'Returns the exit code, stdout and stderr (each capped), and any operations the sandbox denied.';

export const SHELL_TOOL_SPEC: ToolSpec = {
  name: SHELL_TOOL,
  description: SHELL_DESCRIPTION,
  parameters: toolParameters(ShellArgsSchema),
};

export const CONFIRMING_SHELL_TOOL_SPEC: ToolSpec = {
  name: SHELL_TOOL,
  description: `${SHELL_DESCRIPTION} A high-risk command may be held until you send it again with a \`confirmation\`.`,
  parameters: toolParameters(ConfirmingShellArgsSchema),
};

export const AGENT_TOOLS: readonly ToolSpec[] = [SHELL_TOOL_SPEC];

export interface ToolOptions {
  /** The shell tool takes a structured `confirmation` (the defense says so). */
  confirmation?: boolean;
}

/** The tools a model is offered: the plain shell tool, or the one that takes confirmations. */
export function agentTools(options: ToolOptions = {}): readonly ToolSpec[] {
  return options.confirmation === true ? [CONFIRMING_SHELL_TOOL_SPEC] : AGENT_TOOLS;
}

export type CheckedCall = { valid: true; args: ShellArgs } | { valid: false; reason: string };

/** Decide whether a tool call may go on to the defense; pure. */
export function checkToolCall(call: ToolCall, options: ToolOptions = {}): CheckedCall {
  if (call.parseError !== undefined) return { valid: false, reason: `arguments could not be parsed: ${call.parseError}` };
  if (call.name !== SHELL_TOOL) return { valid: false, reason: `unknown tool ${JSON.stringify(call.name)} (the only tool is ${SHELL_TOOL})` };
  const schema = options.confirmation === true ? ConfirmingShellArgsSchema : ShellArgsSchema;
  const parsed = schema.safeParse(call.args);
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
