/**
 * Retry-once for infrastructure hiccups in long Docker tests (the suite's
 * controls, the reproduction, eval): one Docker API error or a container that
 * failed to start says nothing about the code under test, so the unit of work
 * it hit runs once more — and the run's log says so, never silently.
 *
 * Exactly two things count as an infrastructure failure: an AuthbenchError
 * whose code is an infrastructure code (`isInfrastructure`), and a value the
 * caller recognises as one (a rollout that ended `infra_error`, a CLI that
 * exited 125). Anything else — an assertion failure above all, or an
 * AuthbenchError about bad input — is thrown at once, never retried. The
 * second attempt's outcome is final, whatever it is.
 *
 * Every retry prints one line starting with RETRY_MARKER (through
 * console.warn, so vitest shows it under the file that retried);
 * test/infra-retry-reporter.ts collects those lines and scripts/run-tests.ts
 * counts them in the tier summary. This is the test harness's retry, not the
 * product's: scoring still reports every infra_error a rollout ends with.
 */
import { AuthbenchError } from '../core/index.ts';
import { RETRY_MARKER } from './infra-retry-reporter.ts';

export { RETRY_MARKER };

export interface RetryOptions<T> {
  /**
   * Why a value the attempt returned is an infrastructure failure (e.g. "2 rollouts ended
   * infra_error"), or undefined when it is not. Without it only thrown errors are retried.
   */
  infraResult?: (value: T) => string | undefined;
  /** Where the retry line goes (default: console.warn). */
  report?: (line: string) => void;
}

/** Why a thrown value is an infrastructure failure, or undefined when it is anything else. */
export function infraReason(e: unknown): string | undefined {
  return e instanceof AuthbenchError && e.isInfrastructure ? `${e.code}: ${e.message}` : undefined;
}

/** Why an episode (or a rollout result) is an infrastructure failure: it ended `infra_error`. For `infraResult`. */
export function episodeInfra(ended: { end_reason?: string | undefined; infra_error?: { code?: string | undefined; message?: string | undefined } | null | undefined }): string | undefined {
  if (ended.end_reason !== 'infra_error') return undefined;
  const what = [ended.infra_error?.code, ended.infra_error?.message].filter((x) => x !== undefined).join(': ');
  return `the episode ended infra_error${what === '' ? '' : ` (${what})`}`;
}

/** The line a retry prints: what was retried and why, on one line. */
export function retryLine(what: string, why: string): string {
  const reason = why.replace(/\s+/g, ' ').trim();
  return `${RETRY_MARKER} ${what}: infrastructure error (${reason.length > 300 ? `${reason.slice(0, 300)}…` : reason}); retrying once`;
}

/** Report a retry done elsewhere (e.g. by a script the test runs) the same way, so it is counted. */
export function reportRetry(what: string, why: string, report: (line: string) => void = (line) => console.warn(line)): void {
  report(retryLine(what, why));
}

/**
 * Run `attempt`; when it throws an infrastructure error, or returns a value `infraResult`
 * names one, report it and run it once more (`attempt(2)`), returning or throwing whatever
 * that second run does. Any other error is rethrown after the first attempt.
 */
export async function retryInfraOnce<T>(what: string, attempt: (n: 1 | 2) => Promise<T>, options: RetryOptions<T> = {}): Promise<T> {
  let why: string | undefined;
  try {
    const value = await attempt(1);
    why = options.infraResult?.(value);
    if (why === undefined) return value;
  } catch (e) {
    why = infraReason(e);
    if (why === undefined) throw e;
  }
  reportRetry(what, why, options.report);
  return attempt(2);
}
