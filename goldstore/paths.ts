/**
 * Where a task's stored gold lives: oracle-traces/<id>/
 *   gold.json           S_gold and everything derived with it (deterministic bytes)
 *   candidates.json.gz  the candidate set for static scoring, snapshotted once from the image
 *   trace.strace.gz     the first oracle run's raw strace output (gen-gold --tracer strace)
 *   trace.ebpf.gz       or its raw bpftrace records (gen-gold --tracer ebpf); one of the two
 *   overrides.json      annotators' reviewed changes (never written by authbench)
 * Nothing outside this module spells these names.
 */
import { join } from 'node:path';

/** The folder `--oracle-traces` defaults to (repo-relative). */
export const DEFAULT_ORACLE_TRACES = 'oracle-traces';

export interface GoldPaths {
  taskId: string;
  dir: string;
  gold: string;
  candidates: string;
  trace: string;
  /** The raw trace of a gold derived with the eBPF tracer (bpftrace records, not strace lines). */
  ebpfTrace: string;
  overrides: string;
}

export function goldPaths(oracleTracesDir: string, taskId: string): GoldPaths {
  const dir = join(oracleTracesDir, taskId);
  return {
    taskId,
    dir,
    gold: join(dir, 'gold.json'),
    candidates: join(dir, 'candidates.json.gz'),
    trace: join(dir, 'trace.strace.gz'),
    ebpfTrace: join(dir, 'trace.ebpf.gz'),
    overrides: join(dir, 'overrides.json'),
  };
}
