/**
 * Whole-dataset checks (`authbench dataset check`): one typed row per task
 * from the existing library steps, and the pure verdicts and cells the CLI
 * renders.
 */
export { checkDataset, datasetTasksDir, type DatasetCheckEvent, type DatasetCheckOptions } from './check.ts';
export { CHECK_STATUSES, CheckSchema, DatasetReportSchema, DatasetRowSchema, type Check, type CheckStatus, type DatasetReport, type DatasetRow } from './schema.ts';
export { COLUMNS, resolveAxes, resolveLinks, rowCells, scoreGoldAgainstSpec, rowNotes, rowVerdict, summarize, type Cell, type ColumnKey, type RowVerdict, type Tone } from './rows.ts';
