/**
 * `authbench policy` model-call bounds: it used to wait 300 s per call
 * attempt; it now has the model client's defaults, as `eval` does (30 s, a
 * timed-out attempt retried once: a dead endpoint costs about a minute), and
 * checks its flags like `eval` before any work. The policy writer is replaced
 * to see what the command hands the client; nothing reaches Docker or a model.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AuthbenchError } from '../../core/index.ts';
import type { ModelClientOptions } from '../../models/index.ts';
import { runCli } from '../../test/cli.ts';

const seen: { client?: ModelClientOptions | undefined }[] = [];

vi.mock('../../policygen/index.ts', () => ({
  generatePolicy: () => undefined,
  createPolicyWriter: (_ref: unknown, _task: unknown, options: { client?: ModelClientOptions }) => {
    seen.push({ client: options.client });
    throw new AuthbenchError('INVALID_ARGUMENT', 'stopped by the test before any model call');
  },
}));

const TASKS = fileURLToPath(new URL('../../tasks', import.meta.url));
const policy = (...args: string[]) => runCli('policy', '--tasks', TASKS, '--model', 'gpt-5', 'log-triage', ...args);

afterEach(() => {
  seen.length = 0;
});

describe('authbench policy model-call bounds', () => {
  it("leaves the per-call timeout and retries to the client's bounded defaults", async () => {
    const { DEFAULT_TIMEOUT_MS, DEFAULT_RETRY_POLICY } = await import('../../models/index.ts');
    const r = await policy();
    expect(r.err).toContain('stopped by the test');
    expect(seen).toHaveLength(1);
    expect(seen[0]?.client?.timeoutMs).toBeUndefined();
    expect(seen[0]?.client?.retry).toBeUndefined();
    // What those defaults cost on a dead endpoint: two timed-out attempts, about a minute.
    expect(DEFAULT_TIMEOUT_MS * (1 + DEFAULT_RETRY_POLICY.maxTimeoutRetries)).toBeLessThanOrEqual(60_000);
  });

  it('passes --model-timeout and --model-retries when given', async () => {
    await policy('--model-timeout', '90', '--model-retries', '2');
    expect(seen[0]?.client?.timeoutMs).toBe(90_000);
    expect(seen[0]?.client?.retry).toEqual({ maxRetries: 2 });
  });

  it.each([
    [['--model-timeout', '0'], '--model-timeout 0: expected a number > 0'],
    [['--model-timeout', 'abc'], '--model-timeout is not a number'],
    [['--model-retries', '-1'], '--model-retries -1: expected an integer ≥ 0'],
    [['--max-turns', '0'], '--max-turns 0: expected an integer ≥ 1'],
    [['--cache', 'bogus'], 'cache'],
  ])('refuses %j with exit 1 naming the flag, before any work', async (flags, message) => {
    const r = await policy(...flags);
    expect(r.code).toBe(1);
    expect(r.err).toContain(message);
    expect(r.err).not.toContain('internal error');
    expect(seen).toHaveLength(0);
  });

  it('shows the defaults the client uses in --help', async () => {
    const { DEFAULT_TIMEOUT_MS, DEFAULT_RETRY_POLICY } = await import('../../models/index.ts');
    let printed = '';
    const log = vi.spyOn(console, 'log').mockImplementation((s: unknown) => {
      printed += String(s);
    });
    try {
      await runCli('policy', '--help');
    } finally {
      log.mockRestore();
    }
    const help = printed.replace(/\s+/g, ' ');
    expect(help).toMatch(new RegExp(`--model-timeout .*\\[default: ${DEFAULT_TIMEOUT_MS / 1000}\\]`));
    expect(help).toMatch(new RegExp(`--model-retries .*\\[default: ${DEFAULT_RETRY_POLICY.maxRetries}\\]`));
    expect(help).not.toContain('300');
  });
});
