import { z } from 'zod';
import { AuthbenchError, formatProblem, zodProblems } from '../../core/index.ts';
import { FS_ACCESS } from './rules.ts';

/** The JSON object ab-launch writes with --report, just before exec. */
export const LauncherReportSchema = z.object({
  landlock_abi: z.number().int().min(0).describe('Landlock ABI the kernel offers (0: unavailable)'),
  enforcement: z
    .enum(['full', 'partial', 'none'])
    .describe('full: every right the rule model expresses is enforced; partial: Landlock on but weaker; none: no Landlock'),
  seccomp: z.boolean().describe('whether the seccomp filter is installed'),
  handled_fs: z.array(z.enum(FS_ACCESS)).describe('filesystem rights the ruleset handles (denied unless a rule grants them)'),
  handled_net: z.array(z.enum(['bind_tcp', 'connect_tcp'])).default([]).describe('TCP operations the ruleset handles'),
  scoped: z.array(z.enum(['abstract-unix', 'signal'])).default([]).describe('Landlock scopes in effect'),
  rules_applied: z.number().int().min(0).describe('fs and port rules added to the ruleset'),
  rules_skipped_total: z.number().int().min(0).optional().describe('fs rules not applied, all of them (the list below keeps the first 100)'),
  rules_skipped: z
    .array(z.object({ path: z.string().describe('rule path'), reason: z.string().describe('why it was not applied') }))
    .describe('fs rules not applied (missing path, a symlink on the path, no applicable right, Landlock off): stricter, never weaker'),
  fsize_max: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('RLIMIT_FSIZE in bytes set for the command (--fsize-max), soft and hard; absent when not asked for, or not applied under --best-effort'),
});

export type LauncherReport = z.infer<typeof LauncherReportSchema>;

/** Parse the report text; `file` names it in errors. */
export function parseLauncherReport(text: string, file = 'launcher report'): LauncherReport {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new AuthbenchError('SANDBOX_UNAVAILABLE', `${file} is not JSON`, { file, cause: e });
  }
  const parsed = LauncherReportSchema.safeParse(json);
  if (!parsed.success) {
    throw new AuthbenchError('SANDBOX_UNAVAILABLE', `${file} does not match the launcher report format`, {
      file,
      details: zodProblems(parsed.error, file).map(formatProblem),
    });
  }
  return parsed.data;
}

/** What the launcher said on the agent's channel (protocol CHANNEL_MSG fields), in one value. */
export interface ChannelVerdict {
  /** The launcher applied its rules and was about to exec the command. */
  report?: LauncherReport;
  /** The launcher refused or failed: the command never ran. */
  failure?: { exitCode: number; message: string };
  /** exec of the command failed after the report (126/127): the command's own failure, e.g. not found. */
  execFailure?: { exitCode: number; message: string };
}

/**
 * Read the channel's messages (`R<report JSON>`, `F<code> <message>`, `X<code> <message>`). Only
 * the launcher, before it execs the command, can write there: the command never holds the socket.
 */
export function parseChannel(messages: readonly Buffer[]): ChannelVerdict {
  const out: ChannelVerdict = {};
  for (const m of messages) {
    const kind = String.fromCharCode(m[0] ?? 0);
    const body = m.subarray(1).toString('utf8');
    if (kind === 'R') {
      out.report = parseLauncherReport(body, 'launcher report (channel)');
      continue;
    }
    const match = /^(\d+) (.*)$/s.exec(body);
    if ((kind !== 'F' && kind !== 'X') || match === null) {
      throw new AuthbenchError('SANDBOX_UNAVAILABLE', `the launcher sent an unreadable channel message ${JSON.stringify(m.subarray(0, 80).toString('utf8'))}`);
    }
    const verdict = { exitCode: Number.parseInt(match[1] ?? '0', 10), message: match[2] ?? '' };
    if (kind === 'F') out.failure = verdict;
    else out.execFailure = verdict;
  }
  return out;
}
