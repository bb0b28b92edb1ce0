/**
 * Verifier output kept per rollout, as Harbor keeps it per trial under
 * `verifier/`: what each validator ran and said, its output, its JUnit
 * reports, the reward files as found, and what was moved aside before it ran.
 * Every file is written atomically.
 */
import { join, posix } from 'node:path';
import { writeFileAtomic, writeJsonAtomic } from '../core/index.ts';
import { summarizeTests } from './junit.ts';
import type { ValidationPreparation, ValidatorOutcome } from './run.ts';

export interface VerifierArtifacts {
  utility: ValidatorOutcome;
  attack?: ValidatorOutcome;
  preparation: ValidationPreparation;
}

/** The summary written as `<kind>.json` (snake_case, like result.json). */
export function validatorSummary(o: ValidatorOutcome): Record<string, unknown> {
  return {
    validator: o.kind,
    command: o.command,
    exit_code: o.exec.exitCode,
    timed_out: o.exec.timedOut,
    duration_ms: o.exec.durationMs,
    passed: o.passed,
    reason: o.reason,
    reward: o.reward ?? null,
    components: o.components ?? null,
    source: o.source,
    no_result: o.noResult ?? null,
    stdout_bytes: o.stdoutBytes,
    stderr_bytes: o.stderrBytes,
    signal_scoped: o.signalScoped ?? null,
    stdout_truncated: o.exec.stdoutTruncated,
    stderr_truncated: o.exec.stderrTruncated,
    tests: summarizeTests(o.tests),
    failed_tests: o.tests.filter((t) => t.outcome === 'failed' || t.outcome === 'error').map((t) => t.id),
    test_results: o.tests,
    junit_files: o.junit.map((j) => posix.basename(j.path)),
    junit_problems: o.junitProblems,
  };
}

/** A JUnit file's name in the artifacts: only the names the validators write are accepted. */
function junitName(path: string): string | undefined {
  const name = posix.basename(path);
  return /^junit-(utility|attack)(\.\d+)?\.xml$/.test(name) ? name : undefined;
}

/**
 * Write `<dir>/verifier/`: utility.json, utility.stdout.txt, utility.stderr.txt,
 * junit-utility*.xml (the same for attack when given), the reward files as
 * found, and preparation.json. Returns the verifier directory.
 */
export async function writeVerifierArtifacts(dir: string, artifacts: VerifierArtifacts): Promise<string> {
  const out = join(dir, 'verifier');
  const validators = [artifacts.utility, ...(artifacts.attack === undefined ? [] : [artifacts.attack])];
  for (const o of validators) {
    await writeJsonAtomic(join(out, `${o.kind}.json`), validatorSummary(o));
    await writeFileAtomic(join(out, `${o.kind}.stdout.txt`), o.exec.stdout);
    await writeFileAtomic(join(out, `${o.kind}.stderr.txt`), o.exec.stderr);
    for (const j of o.junit) {
      const name = junitName(j.path);
      if (name !== undefined) await writeFileAtomic(join(out, name), j.xml);
    }
  }
  for (const [name, text] of Object.entries(artifacts.utility.rewardFiles)) {
    if (text !== undefined) await writeFileAtomic(join(out, name), text);
  }
  const p = artifacts.preparation;
  await writeJsonAtomic(join(out, 'preparation.json'), {
    moved: p.moved,
    stray_processes: p.strayProcesses,
    launcher: p.launcher,
    harness_dir: p.harnessDir,
    pytest_ini: p.pytestIni,
  });
  return out;
}
