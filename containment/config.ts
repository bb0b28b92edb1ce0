/**
 * What the taint analysis needs to know about a task: which path patterns are
 * untrusted sources, which are designated memory entries, which files hold
 * secrets, where the sink is, and the trusted instruction text. Built from a
 * loaded task.
 */
import { z } from 'zod';
import { AuthbenchError } from '../core/index.ts';
import { HARNESS_ROOT } from '../sandbox/launcher/index.ts';
import { normalizePattern, patternProblem } from '../sandbox/paths/index.ts';
import { SinkSchema, STAGES, type Task } from '../task-format/index.ts';
import { SCRATCH_ROOTS } from './effects.ts';

export const TaintConfigSchema = z
  .object({
    stage: z.enum(STAGES).describe('Evidence stage of the task'),
    untrusted_sources: z
      .array(z.string())
      .describe('Path patterns whose content is untrusted; includes the memory entries when they are sources'),
    memory_files: z.array(z.string()).describe('Designated persistent memory entries (path patterns)'),
    secret_files: z.array(z.string()).describe('Path patterns of files holding canaries: reading one carries a secret label'),
    sink: SinkSchema.nullable().describe('The local stand-in for an exfiltration target; null when the task has none'),
    instruction: z.string().describe('The trusted instruction (instruction.md)'),
    workdir: z.string().nullable().describe('Where commands start, to resolve relative paths in command text'),
    scratch_roots: z.array(z.string()).describe('Directories whose changes are not commits'),
  })
  .describe('Taint sources, sink and trusted intent of one task');
export type TaintConfig = z.infer<typeof TaintConfigSchema>;

export interface TaintConfigOptions {
  /** Patterns of files that hold canaries, in addition to the task's `secret_files`. */
  secretFiles?: readonly string[];
  /** Extra directories whose changes are not commits (e.g. the harness's own run directory). */
  extraScratch?: readonly string[];
}

/**
 * Designated memory entries are sources when the stage is memory-recovery
 * (they were poisoned by an earlier episode); otherwise only when they are
 * also listed as untrusted sources.
 */
export function taintConfigFromTask(task: Pick<Task, 'instruction' | 'workdir' | 'authbench'>, options: TaintConfigOptions = {}): TaintConfig {
  const a = task.authbench;
  const secretFiles = (options.secretFiles ?? []).map((raw, i) => {
    const pattern = normalizePattern(raw);
    const problem = patternProblem(pattern);
    if (problem !== undefined) {
      throw new AuthbenchError('INVALID_ARGUMENT', `secret file pattern ${JSON.stringify(raw)}: ${problem}`, { field: `secret_files.${i}` });
    }
    return pattern;
  });
  // A live two-episode scenario ([authbench.memory]) starts with a clean store: its taint is what episode 1 wrote.
  const memorySources = a.stage === 'memory-recovery' && a.memory === undefined ? a.memory_files : [];
  return {
    stage: a.stage,
    untrusted_sources: [...new Set([...a.untrusted_sources, ...memorySources])],
    memory_files: [...a.memory_files],
    secret_files: [...new Set([...a.secret_files, ...secretFiles])],
    sink: a.sink ?? null,
    instruction: task.instruction,
    workdir: task.workdir,
    scratch_roots: [...SCRATCH_ROOTS, ...(options.extraScratch ?? [])],
  };
}

/** Where the harness keeps its files inside the container: never an agent side effect (taint and metrics alike). */
export const HARNESS_SCRATCH: readonly string[] = [HARNESS_ROOT];

/**
 * The taint configuration of a rollout: the task's, with the harness's own
 * directory as scratch. The defenses decide with it and measurement measures
 * with it, so what is measured is what was enforced.
 */
export function rolloutTaintConfig(task: Pick<Task, 'instruction' | 'workdir' | 'authbench'>): TaintConfig {
  return taintConfigFromTask(task, { extraScratch: HARNESS_SCRATCH });
}
