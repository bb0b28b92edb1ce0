/**
 * The loop in text mode (`--tool-format text`) through the real provider client against the fake
 * OpenAI-compatible server, with a recording session standing in for the sandbox: the question is
 * what runs, what never runs, and what ends the episode.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createModelClient, parseModelRef } from '../models/index.ts';
import { chatCompletion, startFakeOpenAiServer, type FakeServer } from '../models/test-support.ts';
import type { RunOptions, SandboxResult } from '../sandbox/run/index.ts';
import { loadTask, type Task } from '../task-format/index.ts';
import { getDefense, noneDefense } from './defenses/index.ts';
import { runEpisode, type CommandRunner } from './loop.ts';
import { EpisodeSchema } from './schema.ts';

let task: Task;
beforeAll(async () => {
  task = await loadTask(new URL('../tasks/sensitive-release-bump', import.meta.url).pathname);
});

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

class RecordingSession implements CommandRunner {
  readonly commands: string[] = [];
  run(options: RunOptions): Promise<SandboxResult> {
    this.commands.push(options.cmd.at(-1) ?? '');
    return Promise.resolve({
      exec: { exitCode: 0, timedOut: false, stdout: `ran ${this.commands.length}`, stderr: '', stdoutTruncated: false, stderrTruncated: false, durationMs: 1 },
      events: [],
      denials: [],
      enforcement: { level: 'none', landlockAbi: 7, seccomp: false, bestEffort: false },
    });
  }
}

/** A text-mode model on the fake server that plays `replies` in order (the last one repeats). */
async function textModel(replies: readonly string[]) {
  server = await startFakeOpenAiServer((_req, i) => ({ body: chatCompletion({ content: replies[Math.min(i, replies.length - 1)] ?? '' }) }));
  const model = await createModelClient(parseModelRef('openai-compatible/fake'), { baseUrl: server.baseUrl, env: {}, timeoutMs: 10_000, retry: { maxRetries: 0 } });
  return { model, server };
}

interface ChatBody {
  tools?: unknown;
  messages: { role: string; content: unknown }[];
}

describe('text mode', () => {
  it('runs parsed actions, never an invalid one, counts it, and ends on the final answer', async () => {
    const { model, server: fake } = await textModel([
      'I will look at the changelog first.\n```json\n{"tool": "shell", "command": "cat CHANGELOG.md"}\n```',
      // Action-like but cut off: must be neither run nor taken for a final answer.
      'Now the cleanup: {"tool": "shell", "command": "rm -rf /app/bui',
      '```json\n{"tool": "bash", "cmd": "echo bumped >> CHANGELOG.md"}\n```',
      '{"final": "Bumped the version."}',
    ]);
    const session = new RecordingSession();
    const episode = await runEpisode({ task, session, model, defense: noneDefense, toolFormat: 'text' });

    expect(session.commands).toEqual(['cat CHANGELOG.md', 'echo bumped >> CHANGELOG.md']);
    expect(episode.end_reason).toBe('done');
    expect(episode.final_text).toBe('Bumped the version.');
    expect(episode.tool_format).toBe('text');
    expect(episode.steps.map((s) => s.parser?.status)).toEqual(['repaired:fenced', 'invalid:truncated', 'repaired:fenced', 'strict']);
    expect(episode.steps[2]?.parser?.repairs).toEqual(['fenced', 'tool-alias', 'arg-alias']);
    // The raw reply is what the step keeps.
    expect(episode.steps[1]?.text).toContain('rm -rf /app/bui');
    const invalid = episode.steps[1]?.proposals ?? [];
    expect(invalid.map((p) => [p.valid, p.result === undefined])).toEqual([[false, true]]);
    expect(invalid[0]?.invalid_reason).toMatch(/^invalid:truncated: /);
    expect(episode.totals).toMatchObject({ turns: 4, proposals: 3, valid_proposals: 2, invalid_proposals: 1, executed: 2, parser: { strict: 1, repaired: 2, invalid: 1 } });
    expect(() => EpisodeSchema.parse(episode)).not.toThrow();

    // No tools offered; the system prompt teaches the format; observations come back as user turns.
    const bodies = fake.requests.map((r) => r.body as ChatBody);
    expect(bodies).toHaveLength(4);
    expect(bodies.every((b) => b.tools === undefined)).toBe(true);
    expect(JSON.stringify(bodies[0]?.messages[0])).toContain('{\\"tool\\": \\"shell\\", \\"command\\"');
    const third = bodies[2]?.messages ?? [];
    expect(third.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant', 'user']);
    expect(String(third[3]?.content)).toMatch(/^Observation:\nexit code: 0\nstdout:\nran 1/);
    expect(String(third[5]?.content)).toMatch(/^Observation:\nyour reply was not executed \(invalid:truncated/);
  });

  it('an action-like reply at the turn limit is not an answer: the episode ends max_turns', async () => {
    const { model } = await textModel(['Action: shell\nAction Input: {"command": "ls", : "x"}']);
    const session = new RecordingSession();
    const episode = await runEpisode({ task, session, model, defense: noneDefense, toolFormat: 'text', maxTurns: 2 });
    expect(session.commands).toEqual([]);
    expect(episode.end_reason).toBe('max_turns');
    expect(episode).not.toHaveProperty('final_text');
    expect(episode.totals.parser).toEqual({ strict: 0, repaired: 0, invalid: 2 });
  });

  it('native mode: tools offered, no parser record; an action written as text is no final answer', async () => {
    const { model, server: fake } = await textModel([
      '{"tool": "shell", "command": "ls"}',
      'Done: I listed the files.\n```bash\nls\n```',
    ]);
    const session = new RecordingSession();
    const episode = await runEpisode({ task, session, model, defense: noneDefense });
    // The JSON action was not run and did not end the episode; the model was told to call the tool.
    expect(session.commands).toEqual([]);
    expect(episode.end_reason).toBe('done');
    expect(episode.final_text).toContain('Done: I listed the files.');
    expect(episode.steps[0]?.text_action).toMatchObject({ status: 'strict' });
    expect(episode.steps[0]?.proposals).toMatchObject([{ valid: false, invalid_reason: expect.stringMatching(/^an action written as text/) }]);
    // An answer that shows a command in a fenced block is an answer.
    expect(episode.steps[1]).not.toHaveProperty('text_action');
    expect(episode.steps[0]).not.toHaveProperty('parser');
    expect(episode.totals).not.toHaveProperty('parser');
    expect(episode.totals.actions_as_text).toBe(1);
    expect(episode).not.toHaveProperty('tool_format');
    expect(() => EpisodeSchema.parse(episode)).not.toThrow();
    const second = fake.requests[1]?.body as ChatBody;
    expect(second.tools).toBeDefined();
    expect(JSON.stringify(second.messages.at(-1))).toContain('call the shell tool');
  });

  it('native mode: a model that keeps writing actions as text is told twice, then its reply ends the episode, still counted', async () => {
    const { model } = await textModel(['Action: {"tool": "shell", "command": "cat /app/.env"}']);
    const episode = await runEpisode({ task, session: new RecordingSession(), model, defense: noneDefense });
    expect(episode.steps).toHaveLength(3);
    expect(episode.end_reason).toBe('done');
    expect(episode.totals).toMatchObject({ actions_as_text: 3, invalid_proposals: 2, executed: 0 });
  });

  it('native mode: JSON that is not a shell action (a written policy), a command with no tool named, or an unparseable object is an answer', async () => {
    for (const reply of [
      '{"read": ["/app/**"], "write": [], "execute": ["/usr/bin/python3"]}',
      'The service config is {"command": "serve", "port": 8080}.',
      'Action: {"tool": "shell", "command": ',
    ]) {
      const { model } = await textModel([reply]);
      const episode = await runEpisode({ task, session: new RecordingSession(), model, defense: noneDefense });
      expect([episode.steps.length, episode.end_reason, episode.final_text]).toEqual([1, 'done', reply]);
      expect(episode.totals).not.toHaveProperty('actions_as_text');
      await server?.close();
      server = undefined;
    }
  });

  it('passes a confirmation on only to a defense that takes one', async () => {
    const reply = '{"tool": "shell", "command": "echo hi", "confirmation": {"action": "write", "targets": ["/app/x"], "justification": "asked"}}';
    const plain = await runEpisode({ task, session: new RecordingSession(), model: (await textModel([reply, '{"final": "ok"}'])).model, defense: noneDefense, toolFormat: 'text' });
    expect(plain.steps[0]?.proposals[0]).toMatchObject({ valid: true, args: { command: 'echo hi' } });
    expect(plain.steps[0]?.proposals[0]?.args).not.toHaveProperty('confirmation');
    await server?.close();
    const guard = getDefense('structured-guard');
    const policy = { read: ['/app/**'], write: ['/app/**'], execute: ['/usr/bin/bash'] };
    const confirmed = await runEpisode({ task, session: new RecordingSession(), model: (await textModel([reply, '{"final": "ok"}'])).model, defense: guard, policy, toolFormat: 'text' });
    expect(confirmed.steps[0]?.proposals[0]?.args).toHaveProperty('confirmation');
  });
});
