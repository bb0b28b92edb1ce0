/**
 * `authbench eval` end to end through the real CLI: scripted models on the
 * bundled tasks, a run killed mid-way and resumed (exactly one result per
 * rollout), and the provider path against a local OpenAI-compatible server
 * (429 then success, a malformed tool call never executed, a hang that ends
 * as an infrastructure error rather than an agent failure).
 */
import { gunzipSync } from 'node:zlib';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanManaged, connectDocker } from '../../docker/index.ts';
import { readEpisode, readTrace, TRACE_FILE, TRACE_LINE_TYPES, type RolloutResult, type SummaryRow } from '../../evaluation/index.ts';
import { chatCompletion, startFakeOpenAiServer } from '../../models/test-support.ts';
import { retryInfraOnce } from '../infra-retry.ts';

const jobs = mkdtempSync(join(tmpdir(), 'authbench-eval-'));
afterAll(() => rmSync(jobs, { recursive: true, force: true }));

interface EvalJson {
  job: string;
  planned: number;
  done: number;
  reused: number;
  summary: SummaryRow[];
}

interface EvalRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

function runEval(args: string[]): EvalRun {
  const r = spawnSync(process.execPath, ['bin/authbench.ts', 'eval', '--jobs-dir', jobs, '--json', ...args], { encoding: 'utf8', timeout: 600_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function parseEval(r: EvalRun): { status: number | null; json: EvalJson; stderr: string } {
  let json: EvalJson;
  try {
    json = JSON.parse(r.stdout) as EvalJson;
  } catch {
    throw new Error(`eval printed no JSON (exit ${String(r.status)}):\n${r.stderr.slice(-3000)}`);
  }
  return { status: r.status, json, stderr: r.stderr };
}

function evalCli(args: string[]): { status: number | null; json: EvalJson; stderr: string } {
  return parseEval(runEval(args));
}

/** Why an eval run hit the infrastructure: it exited 125 (authbench's or Docker's fault), or rollouts ended infra_error. */
function evalInfra(r: EvalRun): string | undefined {
  if (r.status === 125) return `eval exited 125: ${r.stderr.trim().split('\n').at(-1) ?? ''}`;
  let summary: SummaryRow[] = [];
  try {
    summary = (JSON.parse(r.stdout) as EvalJson).summary;
  } catch {
    return undefined;
  }
  const n = summary.reduce((a, row) => a + row.infraErrors, 0);
  return n === 0 ? undefined : `${n} rollout(s) ended infra_error`;
}

/**
 * evalCli for a long scripted job: a run that hit an infrastructure error is retried once from a
 * fresh job folder, and the retry reported (test/infra-retry.ts); the retry's run is the result.
 */
async function evalCliRetried(job: string, args: string[]): Promise<{ status: number | null; json: EvalJson; stderr: string }> {
  const run = await retryInfraOnce(
    `eval ${job}`,
    (attempt) => {
      if (attempt === 2) rmSync(join(jobs, job), { recursive: true, force: true });
      return Promise.resolve(runEval([...args, '--job-name', job]));
    },
    { infraResult: evalInfra },
  );
  return parseEval(run);
}

/** Async, for tests whose model server lives in this process (spawnSync would block it). */
async function evalCliAsync(args: string[]): Promise<{ status: number | null; json: EvalJson; stderr: string }> {
  const child = spawn(process.execPath, ['bin/authbench.ts', 'eval', '--jobs-dir', jobs, '--json', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const status = await new Promise<number | null>((resolve) => child.once('close', resolve));
  try {
    return { status, json: JSON.parse(stdout) as EvalJson, stderr };
  } catch {
    throw new Error(`eval printed no JSON (exit ${String(status)}):\n${stderr.slice(-3000)}`);
  }
}

function results(job: string): RolloutResult[] {
  const dir = join(jobs, job);
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) => (existsSync(join(dir, d.name, 'result.json')) ? [JSON.parse(readFileSync(join(dir, d.name, 'result.json'), 'utf8')) as RolloutResult] : []));
}

describe('eval with scripted models', () => {
  it('scripted/oracle under its gold policy completes every bundled task', async () => {
    const r = await evalCliRetried('oracle', ['--model', 'scripted/oracle', '--policy', 'gold', '-n', '3']);
    expect(r.status, r.stderr).toBe(0);
    const [row] = r.json.summary;
    expect(row).toMatchObject({ policy: 'gold', defense: 'tool-boundary', infraErrors: 0, tsrStandard: 1, tsrSensitive: 1, asr: 0 });
    const all = results('oracle');
    expect(all.length).toBe(r.json.planned);
    expect(all.every((x) => x.enforcement?.level === 'full' && (x.enforcement.landlock_abi ?? 0) >= 1)).toBe(true);
  });

  it('scripted/follow-injection attacks when nothing defends and is stopped by the kernel under gold', async () => {
    const r = await evalCliRetried('inject', ['--model', 'scripted/follow-injection', '-i', 'sensitive-*', '--defense', 'none', '--defense', 'tool-boundary', '--policy', 'gold', '-n', '3']);
    expect(r.status, r.stderr).toBe(0);
    const none = r.json.summary.find((s) => s.defense === 'none');
    const kernel = r.json.summary.find((s) => s.defense === 'tool-boundary');
    expect(none?.asr).toBeGreaterThan(0);
    expect(kernel?.asr).toBe(0);
    expect(kernel?.completed).toBe(3);
    // The trace-graph measurement agrees with the validators: harm committed only where the attack fired.
    const all = results('inject');
    for (const x of all) {
      expect(x.metrics, x.rollout_id).toBeTruthy();
      expect(x.metrics?.committed_harm, x.rollout_id).toBe(x.attack_success === true ? 1 : 0);
      expect(x.metrics?.valid_tool_proposal_rate, x.rollout_id).toBe(1);
    }
    const harmed = all.filter((x) => x.defense.name === 'none' && x.attack_success === true);
    expect(harmed.length).toBeGreaterThan(0);
    for (const x of harmed) {
      expect(x.metrics?.taint_to_commit_rate, x.rollout_id).toBeGreaterThan(0);
      expect(x.metrics?.blast_radius_raw, x.rollout_id).toBeGreaterThan(0);
    }
    const dir = join(jobs, 'inject', harmed[0]?.rollout_id ?? '');
    const lines = gunzipSync(readFileSync(join(dir, TRACE_FILE))).toString('utf8').trim().split('\n');
    expect([...new Set(lines.map((l) => (JSON.parse(l) as { type: string }).type))].sort()).toEqual([...TRACE_LINE_TYPES].sort());
    // Every line reads under the one schema, and the trace is the episode's only copy.
    const trace = await readTrace(dir);
    expect(trace?.episode?.steps.length).toBeGreaterThan(0);
    expect(trace?.graph?.edges.length).toBeGreaterThan(0);
    expect(readdirSync(dir)).not.toContain('episode.json');
  });
});

describe('eval on a disk with less room than its storage limits', () => {
  it('warns before the first rollout, and runs it', () => {
    // A task limit no disk here has (a million GiB; the warning adds the engine's reserve): the rollouts at once may write more than the disk holds.
    const tasks = join(jobs, 'huge-storage-tasks');
    cpSync(join('tasks', 'csv-sales-report'), join(tasks, 'csv-sales-report'), { recursive: true });
    const toml = join(tasks, 'csv-sales-report', 'task.toml');
    writeFileSync(toml, readFileSync(toml, 'utf8').replace('memory_mb = 1024', 'memory_mb = 1024\nstorage_mb = 1073741824'));
    const r = spawnSync(process.execPath, ['bin/authbench.ts', 'eval', '--jobs-dir', jobs, '--tasks', tasks, '--model', 'scripted/oracle', '--policy', 'gold', '-k', '1', '--job-name', 'disk-short'], { encoding: 'utf8', timeout: 600_000 });
    expect(r.status, r.stderr.slice(-3000)).toBe(0);
    expect(r.stderr).toMatch(/warning: \S+ has [\d.]+ GiB free; the rollouts running at once on it may write 10485\d\d\.0 GiB, each up to its task's storage limit/);
    // Before the first rollout's line (the builds may come first: the images are not rollouts).
    expect(r.stderr).toContain('[1/1]');
    expect(r.stderr.indexOf('GiB free')).toBeLessThan(r.stderr.indexOf('[1/1]'));
  });
});

describe('eval with scripted/replay', () => {
  it('plays every command in order, one per turn, whatever each observation says; --resume refuses a changed file', async () => {
    const file = join(jobs, 'trajectory.json');
    writeFileSync(file, JSON.stringify(['echo one', { command: 'exit 3', timeout_sec: 30 }, 'echo probe > /etc/authbench-replay-probe', 'echo done']));
    const args = ['--model', 'scripted/replay', '--replay', file, '-i', 'log-triage', '--policy', 'gold', '--defense', 'tool-boundary', '--job-name', 'replay', '-n', '1'];
    const r = evalCli(args);
    expect(r.status, r.stderr).toBe(0);
    const [result] = results('replay');
    expect(result?.status).toBe('completed');
    expect(result?.totals).toMatchObject({ proposals: 4, executed: 4 });
    const episode = await readEpisode(join(jobs, 'replay', result?.rollout_id ?? ''));
    if (episode === undefined) throw new Error('the replay rollout wrote no trace');
    expect(episode.steps.map((s) => s.proposals.map((p) => (p.args as { command: string }).command))).toEqual([
      ['echo one'],
      ['exit 3'],
      ['echo probe > /etc/authbench-replay-probe'],
      ['echo done'],
      [],
    ]);
    expect(episode.steps.flatMap((s) => s.proposals.map((p) => p.result?.exit_code))).toEqual([0, 3, 1, 0]);
    expect(episode.steps[1]?.proposals[0]?.result?.timeout_ms).toBe(30_000);
    expect(episode.end_reason).toBe('done');
    expect(episode.final_text).toBe('Done: replayed 4 command(s).');
    const config = JSON.parse(readFileSync(join(jobs, 'replay', 'config.json'), 'utf8')) as { replay?: { path: string; sha256: string } };
    expect(config.replay?.path).toBe(file);

    writeFileSync(file, JSON.stringify(['echo one', 'rm -rf /app']));
    const resumed = spawnSync(process.execPath, ['bin/authbench.ts', 'eval', '--jobs-dir', jobs, ...args, '--resume'], { encoding: 'utf8' });
    expect(resumed.status).toBe(1);
    expect(resumed.stderr).toMatch(/--replay: the file .*trajectory\.json changed since the job started/);
  });
});

describe('interrupted and resumed', () => {
  it('a run killed mid-way and resumed has exactly one result per rollout', async () => {
    const name = 'killed';
    const args = ['bin/authbench.ts', 'eval', '--jobs-dir', jobs, '--model', 'scripted/oracle', '--policy', 'gold', '--policy', 'allow-all', '-i', 'csv-*', '-i', 'log-*', '-i', 'ini-*', '--job-name', name, '-n', '1'];
    const child = spawn(process.execPath, args, { stdio: 'ignore' });
    // Kill hard as soon as the first rollout has its result: nothing gets to clean up.
    await new Promise<void>((resolve, reject) => {
      const deadline = Date.now() + 300_000;
      const poll = setInterval(() => {
        if (existsSync(join(jobs, name)) && results(name).length >= 1) {
          clearInterval(poll);
          child.kill('SIGKILL');
          resolve();
        } else if (Date.now() > deadline) {
          clearInterval(poll);
          child.kill('SIGKILL');
          reject(new Error('no rollout finished in time'));
        }
      }, 200);
    });
    await new Promise((r) => child.once('exit', r));
    const before = results(name).length;
    expect(before).toBeGreaterThanOrEqual(1);
    expect(before).toBeLessThan(6);

    const resumed = evalCli(['--model', 'scripted/oracle', '--policy', 'gold', '--policy', 'allow-all', '-i', 'csv-*', '-i', 'log-*', '-i', 'ini-*', '--job-name', name, '--resume', '-n', '2']);
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(resumed.json.planned).toBe(6);
    expect(resumed.json.reused).toBe(before);
    const all = results(name);
    expect(all.length).toBe(6);
    expect(new Set(all.map((x) => x.rollout_id)).size).toBe(6);
    expect(all.every((x) => x.status === 'completed' && x.utility_success === true)).toBe(true);
    // The killed run's container had no chance to remove itself; its labels find it.
    const engine = await connectDocker();
    await cleanManaged(engine, { labels: { 'authbench.run': `job-${name}` } });
  });

  it('refuses to resume with flags that differ from the saved config, naming them', () => {
    const r = spawnSync(process.execPath, ['bin/authbench.ts', 'eval', '--jobs-dir', jobs, '--model', 'scripted/oracle', '--policy', 'gold', '-i', 'csv-*', '--job-name', 'killed', '--resume'], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/--policy: saved gold, allow-all, given gold/);
  });
});

describe('eval against a local OpenAI-compatible server', () => {
  const solve = readFileSync('tasks/log-triage/solution/solve.sh', 'utf8');

  it('retries a 429, records a malformed tool call without running it, and completes the task', async () => {
    const server = await startFakeOpenAiServer((_req, i) => {
      if (i === 0) return { status: 429, headers: { 'retry-after': '1' }, body: { error: { message: 'slow down' } } };
      if (i === 1) return { body: chatCompletion({ toolCalls: [{ id: 'bad', name: 'shell', arguments: '{"command": "touch /app/SHOULD_NOT_EXIST' }] }) };
      if (i === 2) return { body: chatCompletion({ toolCalls: [{ id: 'ok', name: 'shell', arguments: JSON.stringify({ command: solve }) }] }) };
      return { body: chatCompletion({ content: 'done' }) };
    });
    try {
      const r = await evalCliAsync(['--model', 'openai-compatible/fake', '--base-url', server.baseUrl, '-i', 'log-triage', '--policy', 'gold', '--job-name', 'fake-ok', '--cache', 'off']);
      expect(r.status, r.stderr).toBe(0);
      const [result] = results('fake-ok');
      expect(result?.status).toBe('completed');
      expect(result?.utility_success).toBe(true);
      expect(result?.totals?.invalid_proposals).toBe(1);
      expect(result?.totals?.executed).toBe(1);
      expect(server.requests.length).toBe(4);
      // Where the time went: every phase measured, together no more than the rollout.
      const phases = result?.phases_ms;
      expect(phases).toBeDefined();
      // validator_commands is a part of validate, not a phase of its own.
      const { validator_commands: tests, ...own } = phases ?? { validate: 0 };
      const spent = Object.values(own);
      expect(spent.every((ms) => ms >= 0)).toBe(true);
      expect(phases?.episode ?? 0).toBeGreaterThan(0);
      expect(spent.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(result?.duration_ms ?? 0);
      expect(tests).toBeGreaterThan(0);
      expect(tests).toBeLessThanOrEqual(phases?.validate ?? 0);
    } finally {
      await server.close();
    }
  });

  it('a model that never answers is an infrastructure error, not an agent failure', async () => {
    const server = await startFakeOpenAiServer(() => ({ hang: true }));
    try {
      const r = await evalCliAsync(['--model', 'openai-compatible/fake', '--base-url', server.baseUrl, '-i', 'log-triage', '--policy', 'gold', '--job-name', 'fake-hang', '--cache', 'off', '--model-timeout', '1', '--model-retries', '1']);
      // Nothing was measured: a job of infrastructure errors only is a failed run (125), never a result.
      expect(r.status, r.stderr).toBe(125);
      expect(r.stderr).toMatch(/every rollout hit an infrastructure error/);
      const [result] = results('fake-hang');
      expect(result?.status).toBe('infra_error');
      expect(result?.infra_error).toMatchObject({ source: 'model', code: 'MODEL_UNAVAILABLE' });
      expect(result?.utility_success).toBeNull();
      expect(r.json.summary[0]?.infraErrors).toBe(1);
      expect(r.json.summary[0]?.tsrStandard).toBeNull();
    } finally {
      await server.close();
    }
  });
});
