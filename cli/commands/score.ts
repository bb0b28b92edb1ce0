import chalk from 'chalk';
import type { Argv, CommandModule } from 'yargs';
import { formatProblem } from '../../core/index.ts';
import type { Problem } from '../../core/index.ts';
import type { ReferenceSource } from '../../goldstore/index.ts';
import type { AxisScore, PolicyScore } from '../../score/index.ts';
import { parseBuildFlags, withBuildFlags, type BuildFlagArgs } from '../build-flags.ts';
import { safeText } from '../output-text.ts';
import { printJson, renderTable } from '../table.ts';
import type { Column } from '../table.ts';
import { DEFAULT_DIR_HELP, defaultDir } from '../default-dirs.ts';

export interface ScoreArgs extends BuildFlagArgs {
  policy: string[];
  task: string;
  tasks: string;
  'oracle-traces': string;
  reference: ReferenceSource;
  image: string | undefined;
  'refresh-candidates': boolean;
  json: boolean;
}

export interface ScoreRow {
  policy: string;
  valid: boolean;
  problems: Problem[];
  score: PolicyScore;
}

const command: CommandModule<object, ScoreArgs> = {
  command: 'score',
  describe: 'Score authorization policies statically against a task\'s gold set (precision/recall/F1 per axis, SER)',
  builder: (y: Argv) =>
    withBuildFlags(y)
      .option('policy', {
        describe: 'authorization_policy.json file(s) to score, or gold | allow-all | deny-all (repeatable; several = a batch)',
        type: 'string',
        array: true,
        demandOption: true,
      })
      .option('task', { describe: 'Task id (folder name under --tasks) or task folder', type: 'string', demandOption: true })
      .option('tasks', { describe: 'Folder of task folders', type: 'string', default: defaultDir('tasks'), defaultDescription: DEFAULT_DIR_HELP['tasks'] })
      .option('oracle-traces', { describe: 'Folder holding <task-id>/gold.json and candidates.json.gz', type: 'string', default: defaultDir('oracle-traces'), defaultDescription: DEFAULT_DIR_HELP['oracle-traces'] })
      .option('reference', {
        describe: 'Score against the task\'s tests/permission_eval_spec.json, or the derived oracle-traces/<id>/gold.json',
        choices: ['spec', 'gold'] as const,
        default: 'spec' as const,
      })
      .option('image', {
        describe: 'Take the candidate snapshot from this image instead of building the task image (when none is stored)',
        type: 'string',
      })
      .option('refresh-candidates', {
        describe: 'Rebuild oracle-traces/<id>/candidates.json from the image even if it exists',
        type: 'boolean',
        default: false,
      })
      .option('json', { describe: 'Print JSON instead of a table', type: 'boolean', default: false })
      .example('$0 score --task csv-sales-report --policy policy.json', 'Score one policy against the task spec')
      .example('$0 score --task csv-sales-report --policy runs/*/authorization_policy.json --json', 'Score a batch, JSON out')
      .example('$0 score --task csv-sales-report --policy p.json --reference gold', 'Score against the derived gold set')
      .example('$0 score --task csv-sales-report --policy gold --policy allow-all --policy deny-all', 'The built-in policies, for comparison'),
  handler: async (args) => {
    const { loadTask, resolveTaskRef } = await import('../../task-format/index.ts');
    const { loadPolicyFile } = await import('../../sandbox/policy/index.ts');
    const { isBuiltinPolicySource, loadTaskReference, resolvePolicy, taskCandidates } = await import('../../goldstore/index.ts');
    const { prepareScoring, scorePrepared } = await import('../../score/index.ts');

    const build = await parseBuildFlags(args);
    const task = await loadTask(await resolveTaskRef(args.tasks, args.task));
    const reference = await loadTaskReference(task, args.reference, args['oracle-traces']);
    const { candidates, file, origin } = await taskCandidates({
      task,
      reference,
      source: args.reference,
      oracleDir: args['oracle-traces'],
      ...(args.image === undefined ? {} : { image: args.image }),
      refresh: args['refresh-candidates'],
      build,
      connect: async () => (await import('../../docker/index.ts')).connectDocker(),
      ...(args.json ? {} : { onProgress: (line: string) => process.stderr.write(`${chalk.dim(`  ${task.id} | ${safeText(line)}`)}\n`) }),
    });
    const prepared = prepareScoring(reference, candidates);
    const rows: ScoreRow[] = [];
    for (const path of args.policy) {
      // A built-in name is that policy (gold: the task's stored gold policy), not a file of that name.
      const parse = isBuiltinPolicySource(path)
        ? { valid: true, problems: [], policy: (await resolvePolicy(path, task, args['oracle-traces'])).policy }
        : await loadPolicyFile(path);
      rows.push({ policy: path, valid: parse.valid, problems: parse.problems, score: scorePrepared(parse, prepared) });
    }

    if (args.json) {
      printJson({ task: task.id, reference: args.reference, candidates: { file, origin, image: candidates.image ?? null }, results: rows });
      return;
    }
    process.stdout.write(renderTable(scoreColumns, rows));
    for (const row of rows.filter((r) => !r.valid)) {
      process.stdout.write(`\n${chalk.red(`${row.policy}: invalid, scored 0`)}\n`);
      for (const p of row.problems) process.stdout.write(`  ${safeText(formatProblem(p))}\n`);
    }
    const how = origin === 'built' ? `built from ${candidates.image ?? 'the task image'}` : 'stored';
    process.stdout.write(chalk.dim(`task ${task.id}, reference ${args.reference}; candidates ${file} (${how}); cells are precision/recall/F1\n`));
  },
};

const num = (x: number): string => x.toFixed(2);
const prf = (a: AxisScore): string => `${num(a.precision)}/${num(a.recall)}/${num(a.f1)}`;

export const scoreColumns: Column<ScoreRow>[] = [
  { header: 'policy', value: (r) => r.policy },
  { header: 'valid', value: (r) => (r.valid ? chalk.green('yes') : chalk.red('no')) },
  { header: 'read P/R/F1', value: (r) => prf(r.score.read) },
  { header: 'write P/R/F1', value: (r) => prf(r.score.write) },
  { header: 'execute P/R/F1', value: (r) => prf(r.score.execute) },
  { header: 'macro F1', value: (r) => num(r.score.macro_f1), align: 'right' },
  // Appendix A defines SER as 0 without sensitive entries; the table says so instead of implying safety.
  { header: 'SER', value: (r) => (r.score.sensitive_total === 0 ? chalk.dim('n/a') : num(r.score.sensitive_exposure)), align: 'right' },
];

// The command list holds `{}`-rooted modules; the typed args above are for this file.
export const scoreCommand = command as unknown as CommandModule<object, object>;
