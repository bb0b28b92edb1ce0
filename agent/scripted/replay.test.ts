/**
 * scripted/replay: the file format and its error messages (each bad input
 * names the file and, for an element, its index and field), and the model's
 * turns — one command per model call in order, whatever the observation,
 * then a final answer — on transcripts and through the loop with a fake
 * session.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthbenchError, sha256 } from '../../core/index.ts';
import type { Message, ModelRequest } from '../../models/index.ts';
import type { RunOptions, SandboxResult } from '../../sandbox/run/index.ts';
import { loadTask, type Task } from '../../task-format/index.ts';
import { noneDefense, type Defense } from '../defenses/index.ts';
import { runEpisode } from '../loop.ts';
import { createAgentModel } from '../model.ts';
import { AGENT_TOOLS, MAX_COMMAND_TIMEOUT_SEC } from '../tools.ts';
import { SCRIPTED_MODELS, scriptedModel } from './index.ts';
import { REPLAY_REF, ReplayFileSchema, loadReplayFile, parseReplay, parseReplayText, replayModel } from './replay.ts';

let task: Task;
let dir = '';
beforeAll(async () => {
  task = await loadTask(new URL('../../tasks/log-triage', import.meta.url).pathname);
  dir = await mkdtemp(join(tmpdir(), 'ab-replay-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function request(messages: Message[]): ModelRequest {
  return { system: 'sys', messages, tools: [...AGENT_TOOLS] };
}

/** The transcript after the model's calls (args as the model sent them), each answered with the given output. */
function transcript(turns: readonly [Record<string, unknown>, string][]): Message[] {
  const messages: Message[] = [{ role: 'user', content: 'do the task' }];
  turns.forEach(([args, output], i) => {
    const id = `call_${i + 1}`;
    messages.push({ role: 'assistant', content: '', toolCalls: [{ id, name: 'shell', args }] });
    messages.push({ role: 'tool', toolCallId: id, toolName: 'shell', content: output });
  });
  return messages;
}

/** The error a parse throws (or fails the test). */
function errorOf(run: () => unknown): AuthbenchError {
  try {
    run();
  } catch (e) {
    if (e instanceof AuthbenchError) return e;
    throw e;
  }
  throw new Error('expected an AuthbenchError');
}

describe('replay file schema', () => {
  it('takes strings and { command, timeout_sec? } objects, in order; an empty array too', () => {
    const value = ['ls -la', { command: 'make test', timeout_sec: 300 }, { command: 'cat /etc/passwd' }, { command: 'sleep 1', timeout_sec: MAX_COMMAND_TIMEOUT_SEC }];
    expect(ReplayFileSchema.parse(value)).toEqual(value);
    expect(parseReplay([], 'replay.json')).toEqual([]);
    expect(parseReplayText('[\n  "echo hi",\n  {"command": "true", "timeout_sec": 0.5}\n]\n', 'replay.json')).toEqual(['echo hi', { command: 'true', timeout_sec: 0.5 }]);
  });

  it.each<[string, unknown, string | undefined, string]>([
    ['not an array (object)', { commands: ['ls'] }, undefined, 'must be a JSON array of commands'],
    ['not an array (string)', 'ls', undefined, 'must be a JSON array of commands'],
    ['an element that is a number', ['ls', 7], '[1]', 'must be a command string or an object { "command": string, "timeout_sec"?: number }'],
    ['an element that is null', [null], '[0]', 'must be a command string or an object { "command": string, "timeout_sec"?: number }'],
    ['an element that is an array', [['ls']], '[0]', 'must be a command string or an object { "command": string, "timeout_sec"?: number }'],
    ['an empty command string', ['ls', '  '], '[1]', 'must not be empty'],
    ['an object without command', [{ timeout_sec: 5 }], '[0].command', 'required'],
    ['a command that is not a string', [{ command: ['ls'] }], '[0].command', 'must be a string'],
    ['an empty command in an object', [{ command: '' }], '[0].command', 'must not be empty'],
    ['an unknown key', [{ command: 'ls', timeout: 5 }], '[0]', 'Unrecognized key: "timeout"'],
    ['a zero timeout', ['a', 'b', 'c', { command: 'ls', timeout_sec: 0 }], '[3].timeout_sec', 'must be positive'],
    ['a negative timeout', [{ command: 'ls', timeout_sec: -1 }], '[0].timeout_sec', 'must be positive'],
    ['a timeout over the shell tool\'s limit', [{ command: 'ls', timeout_sec: MAX_COMMAND_TIMEOUT_SEC + 1 }], '[0].timeout_sec', `must be at most ${MAX_COMMAND_TIMEOUT_SEC} (the shell tool's limit)`],
    ['a timeout that is not a number', [{ command: 'ls', timeout_sec: '5' }], '[0].timeout_sec', 'must be a number'],
  ])('%s: names the file and field', (_name, value, field, message) => {
    const e = errorOf(() => parseReplay(value, 'replay.json'));
    expect(e).toMatchObject({ code: 'INVALID_CONFIG', exitCode: 1, file: 'replay.json', message });
    expect(e.field).toBe(field);
  });

  it('lists every problem when there are several', () => {
    const e = errorOf(() => parseReplay([{ command: 'ls', timeout_sec: 0 }, 'ok', 3], 'replay.json'));
    expect(e).toMatchObject({ code: 'INVALID_CONFIG', file: 'replay.json', message: '2 problems in the replay file' });
    expect(e.details).toEqual([
      'error: replay.json: [0].timeout_sec: must be positive',
      'error: replay.json: [2]: must be a command string or an object { "command": string, "timeout_sec"?: number }',
    ]);
  });

  it('invalid JSON names the file', () => {
    const e = errorOf(() => parseReplayText('["ls",]', 'replay.json'));
    expect(e).toMatchObject({ code: 'INVALID_CONFIG', file: 'replay.json' });
    expect(e.message).toMatch(/^invalid JSON: /);
  });

  it('a missing file names the file', async () => {
    const file = join(dir, 'missing.json');
    await expect(loadReplayFile(file)).rejects.toMatchObject({ code: 'INVALID_CONFIG', file, message: expect.stringMatching(/^cannot read replay file: /) as unknown });
  });

  it('a file is read with the sha256 of its bytes; its errors name it as given', async () => {
    const file = join(dir, 'ok.json');
    const text = '["ls", {"command": "make", "timeout_sec": 60}]\n';
    await writeFile(file, text);
    expect(await loadReplayFile(file)).toEqual({ commands: ['ls', { command: 'make', timeout_sec: 60 }], sha256: sha256(text) });
    const bad = join(dir, 'bad.json');
    await writeFile(bad, '["ls", {"command": "make", "timeout_sec": 0}]');
    await expect(loadReplayFile(bad)).rejects.toMatchObject({ code: 'INVALID_CONFIG', file: bad, field: '[1].timeout_sec', message: 'must be positive' });
  });
});

describe('scripted/replay turns', () => {
  const commands = ['cat /app/logs/app.log', { command: 'make test', timeout_sec: 42 }, 'rm -rf /app/logs'];

  it('proposes the n-th command on the n-th call, whatever the observation said, then answers', async () => {
    const model = replayModel(commands);
    expect(model.ref).toEqual(REPLAY_REF);
    const first = await model.complete(request(transcript([])));
    expect(first.toolCalls).toEqual([{ id: 'call_1', name: 'shell', args: { command: 'cat /app/logs/app.log' } }]);
    expect(first).toMatchObject({ finishReason: 'tool-calls', costUsd: 0, cached: false });
    const denied = 'exit code: 1\nstdout: (empty)\nstderr:\ncat: /app/logs/app.log: Permission denied\ndenied: read /app/logs/app.log';
    const second = await model.complete(request(transcript([[{ command: 'cat /app/logs/app.log' }, denied]])));
    expect(second.toolCalls).toEqual([{ id: 'call_2', name: 'shell', args: { command: 'make test', timeout_sec: 42 } }]);
    const blocked = 'blocked by the taint-only defense (taint-only/high-risk-after-taint): ... The command did not run.';
    const third = await model.complete(
      request(transcript([[{ command: 'cat /app/logs/app.log' }, denied], [{ command: 'make test', timeout_sec: 42 }, blocked]])),
    );
    expect(third.toolCalls).toEqual([{ id: 'call_3', name: 'shell', args: { command: 'rm -rf /app/logs' } }]);
    const last = await model.complete(
      request(
        transcript([
          [{ command: 'cat /app/logs/app.log' }, denied],
          [{ command: 'make test', timeout_sec: 42 }, blocked],
          [{ command: 'rm -rf /app/logs' }, 'exit code: 0'],
        ]),
      ),
    );
    expect(last.toolCalls).toEqual([]);
    expect(last.finishReason).toBe('stop');
    expect(last.text).toBe('Done: replayed 3 command(s).');
  });

  it('an empty list answers at once', async () => {
    const answer = await replayModel([]).complete(request(transcript([])));
    expect(answer.toolCalls).toEqual([]);
    expect(answer.text).toBe('Done: replayed 0 command(s).');
  });

  it('is deterministic: the same transcript gives the same response', async () => {
    const model = replayModel(commands);
    const messages = transcript([[{ command: 'cat /app/logs/app.log' }, 'exit code: 0']]);
    expect(await model.complete(request(messages))).toEqual(await model.complete(request(messages)));
  });

  it('checks an in-memory list like a file', () => {
    expect(() => replayModel([{ command: 'ls', timeout_sec: -1 }])).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG', file: 'replay commands', field: '[0].timeout_sec' }) as Error);
  });

  it('runs every command through the loop, one per turn, then ends the episode with its answer', async () => {
    const calls: RunOptions[] = [];
    const session = {
      run(options: RunOptions): Promise<SandboxResult> {
        calls.push(options);
        const failing = options.cmd.at(-1) === 'make test';
        return Promise.resolve({
          exec: { exitCode: failing ? 2 : 0, timedOut: false, stdout: '', stderr: failing ? 'make: *** No rule' : '', stdoutTruncated: false, stderrTruncated: false, durationMs: 1 },
          events: [],
          denials: [],
          enforcement: { level: 'none', landlockAbi: 7, seccomp: false, bestEffort: false },
        });
      },
    };
    const blockRm: Defense = {
      ...noneDefense,
      name: 'test-block-rm',
      decide: (p) => (p.args.command.startsWith('rm ') ? { action: 'block', rule_id: 'test/rm', reason: 'no removals' } : { action: 'allow', rule_id: 'test/allow', reason: 'fine' }),
    };
    const model = await createAgentModel('scripted/replay', task, { replay: [...commands, 'echo after'] });
    const episode = await runEpisode({ task, session, model, defense: blockRm });
    expect(calls.map((c) => c.cmd.at(-1))).toEqual(['cat /app/logs/app.log', 'make test', 'echo after']);
    expect(calls[1]?.timeoutMs).toBe(42_000);
    expect(episode.steps.map((s) => s.proposals.map((p) => p.args))).toEqual([
      [{ command: 'cat /app/logs/app.log' }],
      [{ command: 'make test', timeout_sec: 42 }],
      [{ command: 'rm -rf /app/logs' }],
      [{ command: 'echo after' }],
      [],
    ]);
    expect(episode.totals).toMatchObject({ proposals: 4, blocked: 1, executed: 3 });
    expect(episode.end_reason).toBe('done');
    expect(episode.final_text).toBe('Done: replayed 4 command(s).');
  });
});

describe('building scripted/replay', () => {
  it('is a registered scripted model', () => {
    expect(SCRIPTED_MODELS).toContain('replay');
  });

  it('needs its commands, and they are refused by every other model', async () => {
    await expect(scriptedModel('replay', task)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: 'scripted/replay needs the commands to replay' });
    await expect(createAgentModel('scripted/replay', task)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(createAgentModel('scripted/oracle', task, { replay: ['ls'] })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('scripted/oracle') as unknown });
    await expect(createAgentModel('openai/gpt-5', task, { replay: ['ls'] })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('openai/gpt-5') as unknown });
  });
});
