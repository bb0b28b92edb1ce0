/** The launcher escape suite: probes that must be denied under deny rules and allowed under matching rules. */
export * from './probes.ts';
export { runSelftest, classify, probeArgv, summarize, SELFTEST_IMAGE } from './run.ts';
export type { SelftestRow, SelftestResult, SelftestOptions, SelftestSummary } from './run.ts';
