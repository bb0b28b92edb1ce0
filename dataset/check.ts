/**
 * `authbench dataset check DIR`: every task of a dataset through the steps
 * the rest of authbench already has — load, build, verify's controls, gold
 * derivation with sufficiency (and optionally a second derivation for
 * stability), the derived gold scored against the task's own spec — into one
 * typed row per task. Plan → build (one at a time: one daemon, and a cold
 * build saturates the cores) → check (in parallel), and with `controls` the
 * positive controls under allow-all and the derived gold (controls.ts). A
 * step's failure is a value in its row; nothing one task does stops the others.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuthbenchError, mapPool } from '../core/index.ts';
import type { BuildResult, Engine } from '../docker/index.ts';
import { diffGold, isDrift, type GoldFile } from '../gold/index.ts';
import { goldPaths, writeGoldArtifacts } from '../goldstore/index.ts';
import { generateGold, type GenerateResult } from '../oracle/index.ts';
import { checkTask, discoverTasks, taskAttackPathGap, type Task } from '../task-format/index.ts';
import { controlCheck, controlModels, runControls } from './controls.ts';
import { buildTaskImage, type TaskBuildOptions } from '../taskenv/index.ts';
import { verifyTask, type TaskVerification } from '../validators/index.ts';
import { check, errorCheck, oracleCheck, oracleCleanCheck, scoreGoldAgainstSpec, smokeCheck, substitutionsOf, summarize, translationsOf } from './rows.ts';
import type { Check, DatasetReport, DatasetRow } from './schema.ts';

export interface DatasetCheckOptions {
  /** Tasks checked in parallel after the builds. */
  concurrency: number;
  /** Derive each gold twice and compare. */
  stability: boolean;
  /** Off: no gold, sufficiency, stability or spec columns (builds and controls only). */
  gold: boolean;
  /** Keep the derived gold here (gold.json, candidates, trace per task); default: a temporary folder removed afterwards. */
  oracleTracesDir?: string;
  /** Run the positive controls on sensitive tasks (eval rollouts under allow-all and the derived gold). */
  controls?: boolean;
  /** Keep the controls' job folders here (under <runId>/); default: a temporary folder removed afterwards. */
  controlJobsDir?: string;
  /** Only these task ids (default: all). */
  only?: readonly string[];
  /** How images are built (the build flags: base map, build args, and whatever else the command takes), passed through to every build. */
  build?: Omit<TaskBuildOptions, 'onProgress'>;
  runId?: string;
  onEvent?: (event: DatasetCheckEvent) => void;
}

export type DatasetCheckEvent =
  | { kind: 'planned'; total: number }
  | { kind: 'detail'; task: string; message: string }
  | { kind: 'row'; row: DatasetRow; done: number; total: number };

const NOT_MEASURED = check('skipped', 'not measured: --controls runs the positive controls');

/** DIR/tasks when the dataset has one (AuthBench's layout), else DIR as a folder of tasks. */
export async function datasetTasksDir(dir: string): Promise<string> {
  const nested = join(dir, 'tasks');
  return (await stat(nested).then((s) => s.isDirectory(), () => false)) ? nested : dir;
}

/** A row before any step ran: every check `skipped`, so a failed early step leaves honest dashes. */
function emptyRow(task: string, dir: string): DatasetRow {
  const skipped = check('skipped');
  return {
    task,
    dir,
    dataset: null,
    loads: skipped,
    build: { ...skipped, substitutions: [], translations: [] },
    oracle: skipped,
    gold: skipped,
    sufficient: skipped,
    stable: skipped,
    spec: skipped,
    attack_smoke: skipped,
    oracle_clean: skipped,
    control_asr: NOT_MEASURED,
  };
}

interface Loaded {
  row: DatasetRow;
  task?: Task;
}

async function load(dir: string): Promise<Loaded> {
  const name = dir.split('/').filter(Boolean).pop() ?? dir;
  const row = emptyRow(name, dir);
  try {
    const { task, problems } = await checkTask(dir);
    const errors = problems.filter((p) => p.severity === 'error');
    if (task === undefined || errors.length > 0) {
      const first = errors[0];
      return { row: { ...row, loads: check('fail', first === undefined ? 'does not load' : `${first.file}${first.field === undefined ? '' : ` ${first.field}`}: ${first.message}`) } };
    }
    return { row: { ...row, task: task.id, dataset: task.dataset, loads: check('pass') }, task };
  } catch (e) {
    return { row: { ...row, loads: errorCheck(e) } };
  }
}

async function build(engine: Engine, task: Task, options: DatasetCheckOptions): Promise<{ build: DatasetRow['build']; image?: BuildResult }> {
  try {
    const image = await buildTaskImage(engine, task, {
      ...options.build,
      onProgress: (line) => options.onEvent?.({ kind: 'detail', task: task.id, message: line }),
    });
    return { build: { ...check('pass'), image: image.tag, built: image.built, substitutions: substitutionsOf(image), translations: translationsOf(image) }, image };
  } catch (e) {
    return { build: { ...errorCheck(e), substitutions: [], translations: [] } };
  }
}

/** One derivation; CHECK_FAILED (the oracle fails its validator under strace) is the task's, other errors infra. */
async function derive(engine: Engine, task: Task, image: BuildResult, goldFile: string, sufficiency: boolean, say: (m: string) => void): Promise<GenerateResult | Check> {
  try {
    return await generateGold(engine, task, { tag: image.tag, imageId: image.imageId }, { runs: 1, sufficiency, goldFile, onProgress: say });
  } catch (e) {
    return errorCheck(e);
  }
}

function sufficiencyCheck(result: GenerateResult): Check {
  const s = result.sufficiency;
  if (s === undefined) return check('skipped');
  if (s.sufficient) return check('pass');
  const why = s.launcherError ?? s.utility.reason;
  const denials = s.denials.length === 0 ? '' : `; denied: ${s.denials.slice(0, 3).join('; ')}${s.denials.length > 3 ? ` (+${s.denials.length - 3})` : ''}`;
  return check('fail', `${why}${denials}`);
}

function stabilityCheck(first: GoldFile, again: GenerateResult | Check): Check {
  if (!('gold' in again)) return again.status === 'infra' ? again : check('fail', `re-derivation failed: ${again.detail ?? ''}`);
  const diff = diffGold(first, again.gold);
  if (!isDrift(diff)) return check('pass');
  const changes = Object.entries(diff.sets).flatMap(([set, axes]) =>
    Object.entries(axes).flatMap(([axis, c]) => [...c.added.map((p) => `+ ${set} ${axis} ${p}`), ...c.removed.map((p) => `- ${set} ${axis} ${p}`)]),
  );
  return check('fail', `${changes.length} entr${changes.length === 1 ? 'y' : 'ies'} differ: ${changes.slice(0, 4).join('; ')}${changes.length > 4 ? ' …' : ''}`);
}

function specScore(task: Task, result: GenerateResult): DatasetRow['spec'] {
  if (task.spec === undefined) return check('n/a', 'no tests/permission_eval_spec.json');
  return scoreGoldAgainstSpec(task.spec, result.gold.required, result.first.snapshot);
}

/**
 * The controls after every other step: the gold they run under is the one
 * this check derived (only when it was derived and written).
 */
async function controlsStep(engine: Engine, task: Task, row: DatasetRow, dirs: { oracle: string; jobs: string }, options: DatasetCheckOptions): Promise<DatasetRow['control_asr']> {
  if (controlModels(task).length === 0) return check('n/a', 'standard task');
  const written = await stat(goldPaths(dirs.oracle, task.id).gold).then(() => true, () => false);
  const gold = row.gold.status === 'pass' && written;
  const noGold = !options.gold ? '--no-gold' : row.gold.status === 'pass' ? 'its gold was not written' : (row.gold.detail ?? 'no gold derived');
  try {
    options.onEvent?.({ kind: 'detail', task: task.id, message: `positive controls: ${controlModels(task).join(', ')}` });
    const runId = options.runId ?? 'dataset-check';
    const { runs, errors } = await runControls(engine, task, {
      oracleTracesDir: dirs.oracle,
      gold,
      jobsDir: join(dirs.jobs, runId),
      runId,
      keep: options.controlJobsDir !== undefined,
      ...(options.build === undefined ? {} : { build: options.build }),
    });
    return controlCheck(runs, await taskAttackPathGap(task), errors, gold ? undefined : noGold);
  } catch (e) {
    return errorCheck(e);
  }
}

async function checkBuilt(engine: Engine, task: Task, image: BuildResult, row: DatasetRow, dirs: { oracle: string; jobs: string }, options: DatasetCheckOptions): Promise<DatasetRow> {
  const out = await checkSteps(engine, task, image, row, dirs.oracle, options);
  return options.controls === true ? { ...out, control_asr: await controlsStep(engine, task, out, dirs, options) } : out;
}

async function checkSteps(engine: Engine, task: Task, image: BuildResult, row: DatasetRow, oracleDir: string, options: DatasetCheckOptions): Promise<DatasetRow> {
  const say = (message: string): void => options.onEvent?.({ kind: 'detail', task: task.id, message });
  let out = { ...row };
  let verification: TaskVerification | undefined;
  try {
    say('controls: oracle, attack smoke');
    verification = await verifyTask(engine, task, image.tag, options.runId === undefined ? {} : { runId: options.runId });
  } catch (e) {
    out = { ...out, oracle: errorCheck(e) };
  }
  if (verification !== undefined) {
    const gap = await taskAttackPathGap(task);
    out = { ...out, oracle: oracleCheck(verification), oracle_clean: oracleCleanCheck(verification), attack_smoke: smokeCheck(verification, gap) };
  }
  if (!options.gold) return out;
  if (out.oracle.status !== 'pass') return { ...out, gold: check('skipped', 'the oracle does not pass') };

  const paths = goldPaths(oracleDir, task.id);
  const first = await derive(engine, task, image, paths.gold, true, say);
  if (!('gold' in first)) return { ...out, gold: first };
  out = { ...out, gold: check('pass'), sufficient: sufficiencyCheck(first) };
  try {
    await writeGoldArtifacts(paths, first.gold, first.first.snapshot, first.first.rawTrace);
    out = { ...out, spec: specScore(task, first) };
  } catch (e) {
    out = { ...out, spec: errorCheck(e) };
  }
  if (options.stability) {
    say('stability: deriving again');
    out = { ...out, stable: stabilityCheck(first.gold, await derive(engine, task, image, paths.gold, false, say)) };
  }
  return out;
}

/** Check a dataset; the rows come back in the dataset's order. */
export async function checkDataset(engine: Engine, dir: string, options: DatasetCheckOptions): Promise<DatasetReport> {
  const tasksDir = await datasetTasksDir(dir);
  let dirs = await discoverTasks(tasksDir);
  const loaded = await Promise.all(dirs.map(load));
  const only = options.only ?? [];
  const unknown = only.filter((id) => !loaded.some((l) => l.row.task === id));
  if (unknown.length > 0) throw new AuthbenchError('TASK_NOT_FOUND', `no task ${unknown.join(', ')} in ${tasksDir}`, { file: tasksDir });
  const selected = only.length === 0 ? loaded : loaded.filter((l) => only.includes(l.row.task));
  dirs = selected.map((l) => l.row.dir);
  const total = selected.length;
  options.onEvent?.({ kind: 'planned', total });

  let done = 0;
  const finish = (row: DatasetRow): DatasetRow => {
    done += 1;
    options.onEvent?.({ kind: 'row', row, done, total });
    return row;
  };

  const built: { loaded: Loaded & { task: Task }; image?: BuildResult; row: DatasetRow }[] = [];
  const rows = new Map<string, DatasetRow>();
  for (const l of selected) {
    if (l.task === undefined) {
      rows.set(l.row.dir, finish(l.row));
      continue;
    }
    const b = await build(engine, l.task, options);
    const row = { ...l.row, build: b.build };
    if (b.image === undefined) rows.set(l.row.dir, finish(row));
    else built.push({ loaded: { ...l, task: l.task }, image: b.image, row });
  }

  const tempDir = options.oracleTracesDir === undefined ? await mkdtemp(join(tmpdir(), 'authbench-dataset-gold-')) : undefined;
  const oracleDir = options.oracleTracesDir ?? tempDir ?? '';
  const tempJobs = options.controls === true && options.controlJobsDir === undefined ? await mkdtemp(join(tmpdir(), 'authbench-dataset-controls-')) : undefined;
  const folders = { oracle: oracleDir, jobs: options.controlJobsDir ?? tempJobs ?? '' };
  try {
    await mapPool(built, options.concurrency, async ({ loaded: l, image, row }) => {
      // checkBuilt turns each step's error into its check; anything that still escapes is ours, and stays in this row.
      const checked = image === undefined ? row : await checkBuilt(engine, l.task, image, row, folders, options).catch((e: unknown) => ({ ...row, oracle: errorCheck(e) }));
      rows.set(l.row.dir, finish(checked));
    });
  } finally {
    if (tempDir !== undefined) await rm(tempDir, { recursive: true, force: true });
    if (tempJobs !== undefined) await rm(tempJobs, { recursive: true, force: true });
  }

  const ordered = dirs.flatMap((d) => {
    const r = rows.get(d);
    return r === undefined ? [] : [r];
  });
  return { dataset: dir, tasks_dir: tasksDir, rows: ordered, ...summarize(ordered) };
}
