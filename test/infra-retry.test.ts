/**
 * The Docker tests' retry-once (test/infra-retry.ts) and the reporter that
 * counts its lines: an infrastructure error is retried exactly once and
 * reported; an assertion failure, or any error that is not the
 * infrastructure's, is thrown at once and never retried.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AuthbenchError } from '../core/index.ts';
import InfraRetryReporter, { type RetryReport } from './infra-retry-reporter.ts';
import { episodeInfra, infraReason, RETRY_MARKER, retryInfraOnce } from './infra-retry.ts';

/** An attempt that plays `outcomes` in order (a function throws, anything else is returned), counting calls. */
function scripted<T>(...outcomes: (T | (() => never))[]): { calls: number; attempt: () => Promise<T> } {
  const state = {
    calls: 0,
    attempt: async (): Promise<T> => {
      const next = outcomes[state.calls++];
      await Promise.resolve();
      if (typeof next === 'function') return (next as () => never)();
      return next as T;
    },
  };
  return state;
}

const dockerHiccup = (): never => {
  throw new AuthbenchError('DOCKER_API', 'start container: (HTTP code 500) server error - failed to create task');
};

describe('retryInfraOnce', () => {
  it('retries an infrastructure error once, reports what and why, and returns the retry', async () => {
    const lines: string[] = [];
    const run = scripted(dockerHiccup, 'second');
    await expect(retryInfraOnce('suite csv-convert-mem-0', run.attempt, { report: (l) => lines.push(l) })).resolves.toBe('second');
    expect(run.calls).toBe(2);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^\\${RETRY_MARKER} suite csv-convert-mem-0: infrastructure error \\(DOCKER_API: start container: .*failed to create task\\); retrying once$`));
  });

  it('retries at most once: a second infrastructure error is thrown', async () => {
    const lines: string[] = [];
    const run = scripted<string>(dockerHiccup, () => {
      throw new AuthbenchError('SANDBOX_UNAVAILABLE', 'again');
    });
    await expect(retryInfraOnce('eval oracle', run.attempt, { report: (l) => lines.push(l) })).rejects.toMatchObject({ code: 'SANDBOX_UNAVAILABLE' });
    expect(run.calls).toBe(2);
    expect(lines).toHaveLength(1);
  });

  it('never retries an assertion failure', async () => {
    const lines: string[] = [];
    const run = scripted<string>(() => {
      expect(1, 'the oracle passes').toBe(2);
      throw new Error('unreachable');
    }, 'would pass');
    const failure = await retryInfraOnce('suite x', run.attempt, { report: (l) => lines.push(l) }).catch((e: unknown) => e);
    expect((failure as Error).name).toBe('AssertionError');
    expect((failure as Error).message).toContain('the oracle passes');
    expect(run.calls).toBe(1);
    expect(lines).toEqual([]);
  });

  it('never retries an error that is not the infrastructure’s (bad input, a failed check, a plain Error)', async () => {
    for (const error of [new AuthbenchError('CHECK_FAILED', 'drift'), new AuthbenchError('INVALID_TASK', 'bad'), new Error('eval printed no JSON')]) {
      const lines: string[] = [];
      const run = scripted<string>(() => {
        throw error;
      }, 'would pass');
      await expect(retryInfraOnce('x', run.attempt, { report: (l) => lines.push(l) })).rejects.toBe(error);
      expect(run.calls).toBe(1);
      expect(lines).toEqual([]);
    }
  });

  it('retries a returned value the caller names an infrastructure failure, and only that', async () => {
    const infraResult = (r: { status: string }[]): string | undefined => {
      const n = r.filter((x) => x.status === 'infra_error').length;
      return n === 0 ? undefined : `${n} rollout(s) ended infra_error`;
    };
    const lines: string[] = [];
    const hiccup = scripted([{ status: 'completed' }, { status: 'infra_error' }], [{ status: 'completed' }, { status: 'completed' }]);
    await expect(retryInfraOnce('eval inject', hiccup.attempt, { infraResult, report: (l) => lines.push(l) })).resolves.toEqual([{ status: 'completed' }, { status: 'completed' }]);
    expect(hiccup.calls).toBe(2);
    expect(lines).toEqual([`${RETRY_MARKER} eval inject: infrastructure error (1 rollout(s) ended infra_error); retrying once`]);

    const clean = scripted([{ status: 'completed' }], [{ status: 'completed' }]);
    await expect(retryInfraOnce('eval oracle', clean.attempt, { infraResult, report: (l) => lines.push(l) })).resolves.toEqual([{ status: 'completed' }]);
    expect(clean.calls).toBe(1);
    expect(lines).toHaveLength(1);
  });

  it('retries an episode that ended infra_error, never one that ended any other way', async () => {
    const lines: string[] = [];
    const broken = { end_reason: 'infra_error', infra_error: { code: 'SANDBOX_BROKEN', message: 'the container is exited (exit 137)' } };
    const run = scripted<{ end_reason: string; infra_error?: { code: string; message: string } }>(broken, { end_reason: 'done' });
    await expect(retryInfraOnce('agent log-triage oracle', run.attempt, { infraResult: episodeInfra, report: (l) => lines.push(l) })).resolves.toEqual({ end_reason: 'done' });
    expect(lines).toEqual([`${RETRY_MARKER} agent log-triage oracle: infrastructure error (the episode ended infra_error (SANDBOX_BROKEN: the container is exited (exit 137))); retrying once`]);
    for (const end_reason of ['done', 'sandbox_tampered', 'agent_error', 'max_turns']) {
      const once = scripted({ end_reason }, { end_reason: 'done' });
      await expect(retryInfraOnce('x', once.attempt, { infraResult: episodeInfra, report: (l) => lines.push(l) })).resolves.toEqual({ end_reason });
      expect(once.calls, end_reason).toBe(1);
    }
    expect(lines).toHaveLength(1);
  });

  it('passes the attempt number, so a retry can start from a clean job', async () => {
    const seen: number[] = [];
    await retryInfraOnce(
      'x',
      (n) => {
        seen.push(n);
        if (n === 1) dockerHiccup();
        return Promise.resolve(n);
      },
      { report: () => undefined },
    );
    expect(seen).toEqual([1, 2]);
  });

  it('classifies exactly AuthbenchErrors with an infrastructure code', () => {
    expect(infraReason(new AuthbenchError('IMAGE_BUILD_FAILED', 'boom'))).toBe('IMAGE_BUILD_FAILED: boom');
    expect(infraReason(new AuthbenchError('GOLD_MISSING', 'none'))).toBeUndefined();
    expect(infraReason(Object.assign(new Error('look-alike'), { code: 'DOCKER_API', isInfrastructure: true }))).toBeUndefined();
    expect(infraReason('DOCKER_API')).toBeUndefined();
  });
});

describe('the retry reporter', () => {
  it('collects retry lines from every worker’s console output, prints them at the end and writes the count', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'authbench-infra-retry-'));
    try {
      const printed: string[] = [];
      const reporter = new InfraRetryReporter({ print: (t) => printed.push(t), outputFile: join(dir, 'retries.json') });
      const log = (content: string): void => reporter.onUserConsoleLog({ content, type: 'stderr', time: 0, size: content.length });
      log('[adversarial 3/40] ok symlink-tmp-to-etc\n');
      log(`${RETRY_MARKER} suite a: infrastructure error (DOCKER_API: x); retrying once\n`);
      log(`progress\n${RETRY_MARKER} reproduce-slice1: infrastructure error (2 rollout(s)); retrying once\n`);
      reporter.onTestRunEnd();
      const report = JSON.parse(await readFile(join(dir, 'retries.json'), 'utf8')) as RetryReport;
      expect(report.retries).toEqual([
        `${RETRY_MARKER} suite a: infrastructure error (DOCKER_API: x); retrying once`,
        `${RETRY_MARKER} reproduce-slice1: infrastructure error (2 rollout(s)); retrying once`,
      ]);
      expect(printed.join('')).toContain('2 infrastructure retries in this run:');
      for (const line of report.retries) expect(printed.join('')).toContain(`  ${line}\n`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('writes an empty list when nothing was retried, and prints nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'authbench-infra-retry-'));
    try {
      const printed: string[] = [];
      const reporter = new InfraRetryReporter({ print: (t) => printed.push(t), outputFile: join(dir, 'retries.json') });
      reporter.onTestRunEnd();
      expect(JSON.parse(await readFile(join(dir, 'retries.json'), 'utf8'))).toEqual({ retries: [] });
      expect(printed).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
