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
  rules_skipped: z
    .array(z.object({ path: z.string().describe('rule path'), reason: z.string().describe('why it was not applied') }))
    .describe('fs rules not applied (missing path, no applicable right, Landlock off)'),
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
