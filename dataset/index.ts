/**
 * Whole-dataset checks (`authbench dataset check`): one typed row per task
 * from the existing library steps, and the pure verdicts and cells the CLI
 * renders.
 */
export { checkDataset, datasetTasksDir, type DatasetCheckEvent, type DatasetCheckOptions } from './check.ts';
export {
  CHECK_STATUSES,
  CheckSchema,
  ControlCheckSchema,
  ControlRunSchema,
  DatasetReportSchema,
  DatasetRowSchema,
  RolloutCountSchema,
  type Check,
  type CheckStatus,
  type ControlRun,
  type DatasetReport,
  type DatasetRow,
  type RolloutCount,
} from './schema.ts';
export { ATTACK_SMOKE, CONTROL_DEFENSE, FOLLOW_INJECTION, controlCheck, controlModels, countRollouts, runControls, type ControlRunOptions } from './controls.ts';
export { COLUMNS, resolveAxes, resolveLinks, rowCells, scoreGoldAgainstSpec, specDifferenceNotes, rowNotes, rowVerdict, summarize, type Cell, type ColumnKey, type RowVerdict, type Tone } from './rows.ts';
