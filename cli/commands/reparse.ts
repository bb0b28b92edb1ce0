import chalk from 'chalk';
import type { Argv, CommandModule } from 'yargs';
import { safeText } from '../output-text.ts';
import { printJson, renderTable } from '../table.ts';

interface ReparseArgs {
  job: string;
  json: boolean;
}

const command: CommandModule<object, ReparseArgs> = {
  command: 'reparse <job>',
  describe: "Re-run the current text-action parser over a job's stored raw replies: what a parser change would change (read-only)",
  builder: (y: Argv) =>
    y
      .positional('job', { describe: 'A job folder written by `authbench eval --tool-format text` (jobs/<name>)', type: 'string', demandOption: true })
      .option('json', { describe: 'Print the report as JSON', type: 'boolean', default: false })
      .example('$0 reparse jobs/qwen-text', 'Per model: how many statuses would change, old → new, and which turns')
      .example('$0 reparse jobs/qwen-text --json', 'The same as JSON'),
  handler: async (args) => {
    const { reparseJob } = await import('../../evaluation/index.ts');
    const report = await reparseJob(args.job);
    if (args.json) {
      printJson(report);
      return;
    }
    const out = (s: string): boolean => process.stdout.write(s);
    if (report.models.length === 0) out(chalk.dim(`${safeText(report.job)}: no text-mode replies to re-parse (the job ran with native tool calls, or no rollout has a trace)\n`));
    for (const m of report.models) {
      out(`${chalk.bold(safeText(m.model))}: ${m.changed} of ${m.replies} replies in ${m.rollouts} rollout(s) would change (parser v${report.parser_version})\n`);
      if (m.transitions.length > 0) {
        out(renderTable([
          { header: 'old status', value: (t: (typeof m.transitions)[number]) => t.from },
          { header: 'new status', value: (t) => t.to },
          { header: 'replies', value: (t) => String(t.count), align: 'right' },
        ], m.transitions));
      }
      for (const t of m.turns) out(`  ${safeText(t.rollout_id)} turn ${t.turn}: ${t.old_status} (v${t.old_version}) → ${t.new_status}\n`);
    }
    for (const s of report.skipped) out(chalk.yellow(`skipped ${safeText(s.rollout_id)}: ${safeText(s.why)}\n`));
  },
};

export const reparseCommand = command as unknown as CommandModule<object, object>;
