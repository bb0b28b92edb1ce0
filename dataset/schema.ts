/**
 * `authbench dataset check`: one row per task of a dataset, one schema for
 * the rows and the report, so the table and `--json` say the same thing.
 */
import { z } from 'zod';
import { AxisScoreSchema } from '../score/index.ts';

/**
 * A check's verdict. `pass`/`fail` judge the task; `infra` is authbench or
 * Docker failing (never the task's fault); `incomplete` is an attack path that
 * needs something the dataset copy lacks; `skipped` was not run (an earlier
 * step failed, or a flag turned it off); `n/a` does not apply to the task.
 */
export const CHECK_STATUSES = ['pass', 'fail', 'infra', 'incomplete', 'skipped', 'n/a'] as const;
export type CheckStatus = (typeof CHECK_STATUSES)[number];

export const CheckSchema = z
  .strictObject({
    status: z.enum(CHECK_STATUSES).describe('The verdict of this check.'),
    detail: z.string().optional().describe('Why, in words: the failing reason, the error, what was skipped.'),
  })
  .describe('One check of one task.');
export type Check = z.infer<typeof CheckSchema>;

export const SubstitutionSchema = z
  .strictObject({
    from: z.string().describe('The image as the Dockerfile named it.'),
    to: z.string().describe('The image built from instead.'),
    recipe: z.string().optional().describe('The dataset base recipe that produced it, relative to the dataset root.'),
    differs: z.array(z.string()).describe('Where the substitute differs from what was asked for (flagged), e.g. `python 3.12 → 3.11`.'),
  })
  .describe('A FROM substitution the build applied.');

export const TranslationSchema = z
  .strictObject({
    kind: z.enum(['heredoc', 'apt-name', 'pip-offline']).describe('What was rewritten.'),
    line: z.number().int().describe('1-based Dockerfile line.'),
    detail: z.string().describe('The rewrite in words.'),
    flagged: z.boolean().describe('The result may differ from what the Dockerfile asked for.'),
  })
  .describe('A Dockerfile translation the build applied.');

export const BuildCheckSchema = CheckSchema.extend({
  image: z.string().optional().describe('The task image tag.'),
  built: z.boolean().optional().describe('False when the image was cached (no docker build).'),
  substitutions: z.array(SubstitutionSchema).describe("FROM substitutions, the task's own then its bases' (lineage)."),
  translations: z.array(TranslationSchema).describe("Translations of the task's Dockerfile and of the base recipes it needed."),
}).describe('The image build.');

export const SpecAxisDifferencesSchema = z
  .strictObject({
    missed: z.array(z.string()).describe('Files the spec requires and the derived gold does not grant (its false negatives), sorted.'),
    missed_written: z.array(z.string()).describe('Of `missed` on the read axis: files the gold writes — the spec also reads an output (empty on the other axes).'),
    extra: z.array(z.string()).describe('Files the gold grants beyond the spec and its implicit set (its false positives), sorted.'),
  })
  .describe('One axis of the gold-vs-spec differences.');

export const SpecScoreSchema = CheckSchema.extend({
  read: AxisScoreSchema.optional(),
  write: AxisScoreSchema.optional(),
  execute: AxisScoreSchema.optional(),
  resolved: z.number().int().min(0).optional().describe('Read/write entries (spec and gold) rewritten through a symlink before scoring.'),
  spec_reads_outputs: z
    .boolean()
    .optional()
    .describe("The spec grants reading some file it grants writing: its author read an output back (a dataset's specs need not agree on this; the derived gold grants it only where the oracle read)."),
  differences: z
    .strictObject({ read: SpecAxisDifferencesSchema, write: SpecAxisDifferencesSchema, execute: SpecAxisDifferencesSchema })
    .optional()
    .describe('The files behind a score under 1: what the spec grants that the gold lacks, and the reverse.'),
}).describe("The derived gold (S_gold as a policy) scored against the task's own permission_eval_spec.json.");

export const RolloutCountSchema = z
  .strictObject({
    rollouts: z.number().int().min(0).describe('Rollouts that completed (infrastructure errors are counted apart).'),
    attacked: z.number().int().min(0).describe('Of those, rollouts where the attack validator fired (ASR = attacked / rollouts).'),
    infra: z.number().int().min(0).describe('Rollouts that ended in an infrastructure error.'),
  })
  .describe('Rollouts of one positive control under one policy.');
export type RolloutCount = z.infer<typeof RolloutCountSchema>;

export const ControlRunSchema = z
  .strictObject({
    model: z.string().describe('The positive control, e.g. `scripted/follow-injection`.'),
    allow_all: RolloutCountSchema.describe('Under policy allow-all (nothing enforced): it must attack.'),
    gold: RolloutCountSchema.nullable().describe('Under the gold just derived, enforced: it must be contained; null when there is no gold to run under.'),
    job: z.string().optional().describe('The job folder (when kept with --control-jobs).'),
  })
  .describe('One positive control on one task.');
export type ControlRun = z.infer<typeof ControlRunSchema>;

export const ControlCheckSchema = CheckSchema.extend({
  controls: z.array(ControlRunSchema).optional().describe('Per control, what it did (absent when not run).'),
}).describe('The positive controls (--controls): attack under allow-all, contained under the derived gold.');

export const DatasetRowSchema = z
  .strictObject({
    task: z.string().describe('Task id (its folder name when it does not load).'),
    dir: z.string().describe('The task folder, as found under the dataset.'),
    dataset: z.enum(['standard', 'sensitive']).nullable().describe('AuthBench eval dataset; null when the task does not load.'),
    loads: CheckSchema.describe('task.toml, layout and spec load without errors.'),
    build: BuildCheckSchema,
    oracle: CheckSchema.describe('solve.sh exits 0 and the utility validator passes.'),
    gold: CheckSchema.describe('A gold set was derived from a traced oracle run.'),
    sufficient: CheckSchema.describe('The oracle passes again under its own gold policy, enforced.'),
    stable: CheckSchema.describe('A second derivation gives the same gold (--stability).'),
    spec: SpecScoreSchema,
    attack_smoke: CheckSchema.describe('attack_smoke.sh makes the attack validator fire.'),
    oracle_clean: CheckSchema.describe('The attack validator does not fire on the oracle.'),
    control_asr: ControlCheckSchema,
  })
  .describe('One task of `authbench dataset check`.');
export type DatasetRow = z.infer<typeof DatasetRowSchema>;

export const DatasetReportSchema = z
  .strictObject({
    dataset: z.string().describe('The folder checked.'),
    tasks_dir: z.string().describe('Where the tasks were found (DIR/tasks, else DIR).'),
    rows: z.array(DatasetRowSchema),
    summary: z
      .strictObject({
        tasks: z.number().int(),
        ok: z.number().int().describe('Rows with no failed and no infra check.'),
        failed: z.number().int().describe('Rows with a failed check (and no infra one).'),
        infra: z.number().int().describe('Rows with an infrastructure error.'),
        specs_scored: z.number().int().optional().describe('Rows whose derived gold was scored against their spec.'),
        specs_reading_outputs: z.number().int().optional().describe('Of those, specs that grant reading a file they grant writing.'),
      })
      .describe('Counts over the rows.'),
    status: z.enum(['ok', 'check-failed', 'infra-failed']).describe('infra-failed wins over check-failed: some task was never judged.'),
  })
  .describe('`authbench dataset check --json`.');
export type DatasetReport = z.infer<typeof DatasetReportSchema>;
