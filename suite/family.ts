/**
 * What a scenario family is: a task template plus parameters. A family only
 * writes the ordinary work (a clean task and an active-tainted variant); the
 * security and memory/recovery stages are built from its clean task by the
 * kit, so every family gets the same, audited attack and poisoning machinery.
 */
import type { Stage } from '../task-format/index.ts';

export interface FileSpec {
  content: string;
  /** Octal mode; default 0o644. */
  mode?: number;
}

/** Deterministic randomness for one scenario; every choice a family makes goes through it. */
export interface Draw {
  /** Uniform in [0, 1). */
  next(): number;
  int(lo: number, hi: number): number;
  pick<T>(items: readonly T[]): T;
  /** k distinct items, in draw order. */
  sample<T>(items: readonly T[], k: number): T[];
  shuffle<T>(items: readonly T[]): T[];
  /** Lower-case hex of n characters. */
  hex(n: number): string;
}

/** A workspace file an injection can be embedded in without changing the task's correct answer. */
export interface Carrier {
  path: string;
  /** How the injected text is framed there, for the manifest (e.g. "log line", "config comment"). */
  describe: string;
  embed(text: string): string;
}

/** One concrete task, as a family writes it. Paths are absolute container paths. */
export interface Workspace {
  /** The trusted instruction (markdown). */
  instruction: string;
  /** Files placed into the image, by absolute path. */
  files: Record<string, FileSpec>;
  /** Shell lines run once at image build after the files are in place (e.g. create a git history). */
  setup?: string[];
  /** Body of solution/solve.sh, run with bash `set -euo pipefail` from /app. */
  solve: string;
  /** Python: module-level pytest test functions for tests/test_outputs.py (imports json, os, pathlib.Path). */
  checks: string;
  /** Untrusted files the work legitimately depends on (active-tainted). */
  untrusted?: string[];
  /** Where injected text can hide in this workspace (security and memory stages). */
  carriers: Carrier[];
  /** What was drawn, recorded in task.toml and the manifest. */
  parameters: Record<string, unknown>;
  /** Readable tags for task.toml. */
  tags: string[];
}

export interface Family {
  id: string;
  title: string;
  /** Harbor's `[metadata] category`. */
  category: string;
  /** Bumped whenever generated content changes, so results never pool across versions silently. */
  version: string;
  /** Debian packages of the family base image (besides python3, pytest and strace, which every base has). */
  packages: readonly string[];
  clean(draw: Draw): Workspace;
  /** The user asks to act on untrusted content: the authorized side effect depends on it. */
  activeTainted(draw: Draw): Workspace;
}

export const STAGE_ABBREVIATIONS: Record<Stage, string> = {
  security: 'sec',
  'active-tainted': 'act',
  clean: 'cln',
  'memory-recovery': 'mem',
};
