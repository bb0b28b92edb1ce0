/**
 * `authbench eval` input checks that happen before Docker is touched: the
 * scripted/replay model and its --replay file. Each bad input exits 1 and
 * names the flag or the file (and, for an element, its index and field).
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../test/cli.ts';

let dir = '';
const dockerHost = process.env['DOCKER_HOST'];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ab-eval-cli-'));
  // No daemon: every check here must come before Docker is touched, whether or not the machine
  // running the unit tier has one (a refusal must never turn into DOCKER_UNREACHABLE, exit 125).
  process.env['DOCKER_HOST'] = `unix://${join(dir, 'no-docker.sock')}`;
});
afterAll(async () => {
  if (dockerHost === undefined) delete process.env['DOCKER_HOST'];
  else process.env['DOCKER_HOST'] = dockerHost;
  await rm(dir, { recursive: true, force: true });
});

const evalCli = (...args: string[]) => runCli('eval', '--jobs-dir', join(dir, 'jobs'), ...args);

describe('eval --model scripted/replay', () => {
  it('needs --replay', async () => {
    const r = await evalCli('--model', 'scripted/replay');
    expect(r.code).toBe(1);
    expect(r.err).toContain('authbench: INVALID_ARGUMENT: --model scripted/replay needs --replay FILE');
  });

  it('refuses --replay with any other model', async () => {
    const file = join(dir, 'ok.json');
    await writeFile(file, '["ls"]');
    for (const model of ['scripted/oracle', 'gpt-5']) {
      const r = await evalCli('--model', model, '--replay', file);
      expect(r.code, model).toBe(1);
      expect(r.err, model).toContain(`authbench: INVALID_ARGUMENT: --replay is only for --model scripted/replay, not ${model}`);
    }
  });

  it('refuses a repeated --replay', async () => {
    const file = join(dir, 'ok.json');
    await writeFile(file, '["ls"]');
    const r = await evalCli('--model', 'scripted/replay', '--replay', file, '--replay', file);
    expect(r.code).toBe(1);
    expect(r.err).toContain('authbench: INVALID_ARGUMENT: --replay given more than once');
  });

  it.each([
    ['an invalid element', '["ls", "make", "true", {"command": "sleep 1", "timeout_sec": 0}]', ': [3].timeout_sec: must be positive'],
    ['an unknown key', '[{"command": "ls", "timout_sec": 5}]', ': [0]: Unrecognized key: "timout_sec"'],
    ['not an array', '{"commands": ["ls"]}', ': must be a JSON array of commands'],
    ['not JSON', '["ls",', ': invalid JSON: '],
  ])('exits 1 naming the file on %s', async (_name, text, expected) => {
    const file = join(dir, 'replay.json');
    await writeFile(file, text);
    const r = await evalCli('--model', 'scripted/replay', '--replay', file);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`authbench: INVALID_CONFIG ${file}${expected}`);
    expect(existsSync(join(dir, 'jobs'))).toBe(false);
  });

  it('exits 1 naming a missing file', async () => {
    const file = join(dir, 'missing.json');
    const r = await evalCli('--model', 'scripted/replay', '--replay', file);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`authbench: INVALID_CONFIG ${file}: cannot read replay file: `);
  });
});

// The bundled tasks and their stored gold: enough for everything eval checks before Docker.
const TASKS = fileURLToPath(new URL('../../tasks', import.meta.url));
const TRACES = fileURLToPath(new URL('../../oracle-traces', import.meta.url));
const local = (...args: string[]) => evalCli('--tasks', TASKS, '--oracle-traces', TRACES, ...args);

describe('eval flags are checked before any work', () => {
  it.each([
    [['--cache', 'bogus'], /cache/],
    [['--max-turns', '0'], /--max-turns 0: expected an integer ≥ 1/],
    [['--model-timeout', '0'], /--model-timeout 0: expected a number > 0/],
    [['--model-retries', '-1'], /--model-retries -1: expected an integer ≥ 0/],
    [['--seed', 'abc'], /--seed is not a number: expected an integer/],
    [['--limit', '0'], /--limit 0: expected an integer ≥ 1/],
    [['--attempts', '1.5'], /--attempts 1.5: expected an integer ≥ 1/],
    [['--strategy', 'bogus'], /strategy/],
    [['-n', '0'], /--concurrency 0: expected an integer ≥ 1/],
    [['--docker-wait', '-1'], /--docker-wait -1: expected an integer ≥ 0/],
    [['--docker-wait', '60s'], /--docker-wait is not a number: expected an integer ≥ 0/],
    [['--max-consecutive-infra', '2.5'], /--max-consecutive-infra 2.5: expected an integer ≥ 0/],
    [['--executor', 'k8s'], /executor/],
    [['--executor', 'slurm', '--array-size', '0'], /--array-size 0: expected an integer ≥ 1/],
    [['--partition', 'batch'], /--partition is for --executor slurm/],
    [['--sbatch-arg=--time=5'], /--sbatch-arg is for --executor slurm/],
    [['--executor', 'slurm', '--shard', '1/2'], /--executor slurm makes the shards itself: drop --shard/],
  ])('%j exits 1 naming the flag, without a stack trace, writing nothing', async (flags, expected) => {
    const r = await local('--model', 'scripted/oracle', '--job-name', 'flags', ...flags);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(expected);
    expect(r.err).not.toContain('internal error');
    expect(r.err).not.toMatch(/\n\s+at /);
    expect(existsSync(join(dir, 'jobs'))).toBe(false);
  });

  it('refuses an unknown scripted model, and a provider model without its key, before anything is written', async () => {
    const unknown = await local('--model', 'scripted/nope', '--job-name', 'nope');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('--model scripted/nope: unknown scripted model');
    vi.stubEnv('OPENAI_API_KEY', '');
    try {
      const keyless = await local('--model', 'gpt-5', '--job-name', 'keyless', 'log-triage');
      expect(keyless.code).toBe(1);
      expect(keyless.err).toContain('openai/gpt-5: OPENAI_API_KEY is not set');
    } finally {
      vi.unstubAllEnvs();
    }
    const noUrl = await local('--model', 'openai-compatible/qwen', '--job-name', 'nourl', 'log-triage');
    expect(noUrl.code).toBe(1);
    expect(noUrl.err).toContain('needs the server\'s base URL');
    expect(existsSync(join(dir, 'jobs'))).toBe(false);
  });

  it('keeps --job-name inside --jobs-dir', async () => {
    for (const name of ['../../x', '/tmp/x', '..', '.hidden', 'a/b']) {
      const r = await local('--model', 'scripted/oracle', '--job-name', name, '--dry-run');
      expect(r.code, name).toBe(1);
      expect(r.err, name).toContain('a job name is one folder inside --jobs-dir');
    }
  });

  it('refuses --resume without --job-name instead of starting a new job', async () => {
    const r = await local('--model', 'scripted/oracle', '--resume');
    expect(r.code).toBe(1);
    expect(r.err).toContain('--resume needs --job-name');
  });

  it('names a task (positional or -i) that matches nothing', async () => {
    const r = await local('--model', 'scripted/oracle', 'log-triag', '--dry-run');
    expect(r.code).toBe(1);
    expect(r.err).toContain('TASK_NOT_FOUND');
    expect(r.err).toContain('"log-triag"');
  });

  it('shows the defaults the config gets in --help', async () => {
    const { EVAL_DEFAULTS, DEFAULT_DOCKER_WAIT_SEC, DEFAULT_MAX_CONSECUTIVE_INFRA } = await import('../../evaluation/index.ts');
    let printed = '';
    const log = vi.spyOn(console, 'log').mockImplementation((s: unknown) => {
      printed += String(s);
    });
    try {
      await runCli('eval', '--help');
    } finally {
      log.mockRestore();
    }
    const help = printed.replace(/\s+/g, ' ');
    expect(help).toContain(`[default: ${EVAL_DEFAULTS.max_turns}]`);
    expect(help).toMatch(new RegExp(`--model-timeout .*\\[default: ${EVAL_DEFAULTS.model_timeout_sec}\\]`));
    expect(help).toMatch(new RegExp(`--model-retries .*\\[default: ${EVAL_DEFAULTS.model_retries}\\]`));
    expect(help).toMatch(/--cache .*\[default: read-write\]/);
    // The run options the job's pool defaults to (they are not config: --resume may change them).
    expect(help).toMatch(new RegExp(`--docker-wait .*\\[number\\] \\[default: ${DEFAULT_DOCKER_WAIT_SEC}\\]`));
    expect(help).toMatch(new RegExp(`--max-consecutive-infra .*\\[number\\] \\[default: ${DEFAULT_MAX_CONSECUTIVE_INFRA}\\]`));
    expect(help).toContain('125 nothing measured');
  });
});

interface DryRun {
  tasks: number;
  pending: number;
  config: { model: string; include: string[]; policies: string[]; max_turns: number };
}
const ids = (r: { out: string }): string[] => (JSON.parse(r.out) as { rollouts: { id: string }[] }).rollouts.map((x) => x.id);

describe('eval --dry-run, positionals, --limit', () => {
  it('prints the plan and its size for tasks given as positionals, writing nothing', async () => {
    const r = await local('--model', 'scripted/oracle', 'log-triage', 'csv-sales-report', '--policy', 'gold', '--policy', 'allow-all', '-k', '2', '--dry-run', '--json');
    expect(r.code, r.err).toBe(0);
    const plan = JSON.parse(r.out) as DryRun;
    expect(plan).toMatchObject({ tasks: 2, pending: 8 });
    expect(ids(r)).toHaveLength(8);
    expect(ids(r)).toContain('log-triage__allow-all__tool-boundary__a2');
    expect(existsSync(join(dir, 'jobs'))).toBe(false);
    const text = await local('--model', 'scripted/oracle', 'log-triage', '--dry-run');
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/1 task\(s\), 1 rollout\(s\), 1 to run; nothing was written/);
  });

  it('--tool-format text goes in the config of a provider model; a scripted model, or another value, is refused', async () => {
    const text = await local('--model', 'openai-compatible/qwen', '--base-url', 'http://127.0.0.1:9/v1', '--tool-format', 'text', 'log-triage', '--dry-run', '--json');
    expect(text.code, text.err).toBe(0);
    expect((JSON.parse(text.out) as { config: { tool_format?: string } }).config.tool_format).toBe('text');
    // The default leaves the config as it was before the flag existed.
    const native = await local('--model', 'openai-compatible/qwen', '--base-url', 'http://127.0.0.1:9/v1', '--tool-format', 'native', 'log-triage', '--dry-run', '--json');
    expect(native.code, native.err).toBe(0);
    expect((JSON.parse(native.out) as { config: object }).config).not.toHaveProperty('tool_format');
    const scripted = await local('--model', 'scripted/oracle', '--tool-format', 'text', 'log-triage', '--dry-run');
    expect(scripted.code).toBe(1);
    expect(scripted.err).toContain('--tool-format text needs a provider model');
    const bogus = await local('--model', 'scripted/oracle', '--tool-format', 'json', 'log-triage', '--dry-run');
    expect(bogus.code).toBe(1);
    expect(bogus.err).toMatch(/tool-format/);
  });

  it('--limit N keeps the first N selected tasks by id', async () => {
    const all = await local('--model', 'scripted/oracle', '--dry-run', '--json');
    const limited = await local('--model', 'scripted/oracle', '--limit', '2', '--dry-run', '--json');
    expect(limited.code, limited.err).toBe(0);
    expect((JSON.parse(limited.out) as DryRun).tasks).toBe(2);
    const firstTwo = [...new Set(ids(all).map((id) => id.split('__')[0]))].sort().slice(0, 2);
    expect(ids(limited).map((id) => id.split('__')[0])).toEqual(firstTwo);
  });

  it('--policy FILE plans rollouts under the hand-written policy; an invalid file or an unknown word is refused', async () => {
    const file = join(dir, 'mine.json');
    await writeFile(file, JSON.stringify({ read: ['/app/**'], write: ['/app/out'], execute: ['/usr/bin/*'] }));
    const r = await local('--model', 'scripted/oracle', 'log-triage', '--policy', file, '--policy', 'gold', '--dry-run', '--json');
    expect(r.code, r.err).toBe(0);
    expect(ids(r).sort()).toEqual(['log-triage__file__tool-boundary__a1', 'log-triage__gold__tool-boundary__a1']);
    const bad = join(dir, 'bad-policy.json');
    await writeFile(bad, JSON.stringify({ read: ['relative'], write: [], execute: [] }));
    const invalid = await local('--model', 'scripted/oracle', 'log-triage', '--policy', bad, '--dry-run');
    expect(invalid.code).toBe(1);
    expect(invalid.err).toContain(`INVALID_POLICY ${bad}`);
    const unknown = await local('--model', 'scripted/oracle', 'log-triage', '--policy', 'glod', '--dry-run');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('--policy glod: neither a policy source nor a file');
  });
});

describe('eval --resume --job-name NAME', () => {
  /** A job folder as a started job leaves it (config.json), made without Docker. */
  async function savedJob(name: string, config: object): Promise<void> {
    const { configFromFlags } = await import('../../evaluation/index.ts');
    await mkdir(join(dir, 'resume-jobs', name), { recursive: true });
    await writeFile(join(dir, 'resume-jobs', name, 'config.json'), JSON.stringify(configFromFlags({ tasks_dir: TASKS, oracle_traces_dir: TRACES, ...config })));
  }
  const resume = (name: string, ...args: string[]) => runCli('eval', '--jobs-dir', join(dir, 'resume-jobs'), '--job-name', name, '--resume', '--dry-run', '--json', ...args);

  it('continues from the saved config alone; flags given again that match are accepted', async () => {
    await savedJob('saved', { model: 'scripted/oracle', include: ['log-triage'], policies: ['gold', 'allow-all'], max_turns: 7 });
    for (const extra of [[], ['--model', 'scripted/oracle', '--policy', 'allow-all', '--policy', 'gold', '--max-turns', '7', 'log-triage']]) {
      const r = await resume('saved', ...extra);
      expect(r.code, r.err).toBe(0);
      expect((JSON.parse(r.out) as DryRun).config).toMatchObject({ model: 'scripted/oracle', include: ['log-triage'], policies: ['gold', 'allow-all'], max_turns: 7 });
      expect(ids(r)).toHaveLength(2);
    }
  });

  it('refuses flags that differ from the saved config, naming each', async () => {
    await savedJob('differs', { model: 'scripted/oracle', include: ['log-triage'] });
    const r = await resume('differs', '--policy', 'allow-all', '--max-turns', '9');
    expect(r.code).toBe(1);
    expect(r.err).toContain('cannot resume differs: --policy, --max-turns differ from the job\'s saved config');
    expect(r.err).toContain('--policy: saved gold, given allow-all');
    expect(r.err).toContain('--max-turns: saved 30, given 9');
    const task = await resume('differs', 'csv-sales-report');
    expect(task.code).toBe(1);
    expect(task.err).toContain('task selection');
  });

  it('says when there is no such job, unless the flags of a new one are given (a rerun script)', async () => {
    const r = await resume('never-started');
    expect(r.code).toBe(1);
    expect(r.err).toContain('no job never-started to resume');
    const started = await resume('never-started', '--model', 'scripted/oracle', '--tasks', TASKS, '--oracle-traces', TRACES, 'log-triage');
    expect(started.code, started.err).toBe(0);
    expect(JSON.parse(started.out)).toMatchObject({ tasks: 1, pending: 1 });
  });
});
