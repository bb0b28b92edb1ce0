import { describe, expect, it } from 'vitest';
import { EPISODE_SCHEMA_VERSION, EpisodeSchema, parseRole, roleInput, type Episode, type EpisodeOptions, type Step } from '../agent/index.ts';
import type { Task } from '../task-format/index.ts';
import { configFromFlags, resumeConfig } from './resume.ts';
import { mergeAgentEpisodes, rolloutTopology, runTopology } from './topology.ts';

function episode(turns: number, over: Partial<Episode> = {}): Episode {
  const steps: Step[] = Array.from({ length: turns }, (_, i) => ({
    turn: i + 1,
    started_at: '2026-01-01T00:00:00.000Z',
    model_call: { usage: { input_tokens: 1, output_tokens: 1 }, cost_usd: null, latency_ms: 1, cached: false, finish_reason: 'tool-calls' },
    text: '',
    proposals: [{ id: `call_${i + 1}`, tool: 'shell', args: { command: 'true' }, valid: true, events: [] }],
  }));
  return {
    schema_version: EPISODE_SCHEMA_VERSION,
    task_id: 't',
    model: 'scripted/relay',
    defense: { name: 'none', version: '1' },
    started_at: `start-${turns}`,
    setup: { created_dirs: [] },
    steps,
    end_reason: 'done',
    tampering: [],
    enforcement: null,
    totals: {
      turns,
      proposals: turns,
      valid_proposals: turns,
      invalid_proposals: 0,
      blocked: 0,
      held: 0,
      rolled_back: 0,
      executed: turns,
      denials: 0,
      input_tokens: turns,
      output_tokens: turns,
      cost_usd: null,
      model_latency_ms: turns,
      duration_ms: 10 * turns,
    },
    ...over,
  };
}

const task = { id: 't', instruction: 'Fix /app/config.ini.', authbench: {} } as unknown as Task;

describe('rolloutTopology', () => {
  it("takes the scenario's own, else the job's, else single; a memory scenario is always single", () => {
    expect(rolloutTopology({ authbench: { topology: 'peer-chain' } } as Task, { topology: 'supervisor-worker' })).toBe('peer-chain');
    expect(rolloutTopology({ authbench: {} } as Task, { topology: 'supervisor-worker' })).toBe('supervisor-worker');
    expect(rolloutTopology({ authbench: {} } as Task, {})).toBe('single');
    expect(rolloutTopology({ authbench: { memory: { mode: 'session' } } } as unknown as Task, { topology: 'peer-chain' })).toBe('single');
  });
});

describe('--topology in the job config', () => {
  it('records a multi-agent topology, leaves single out (configs stay as they were), and refuses another on resume', () => {
    expect(configFromFlags({ model: 'scripted/relay', topology: 'supervisor-worker' }).topology).toBe('supervisor-worker');
    expect('topology' in configFromFlags({ model: 'scripted/relay', topology: 'single' })).toBe(false);
    const saved = configFromFlags({ model: 'scripted/relay', topology: 'peer-chain' });
    expect(() => resumeConfig('j', saved, { topology: 'supervisor-worker' })).toThrow(/--topology/);
    expect(() => resumeConfig('j', configFromFlags({ model: 'scripted/relay' }), { topology: 'single' })).not.toThrow();
  });
});

describe('mergeAgentEpisodes', () => {
  it("marks each step with its agent and the receiver's first step with its message, numbering turns on", () => {
    const message = { from: 'supervisor', to: 'worker', text: 'do it' };
    const merged = mergeAgentEpisodes([
      { agent: 'supervisor', episode: episode(2, { final_text: 'do it' }) },
      { agent: 'worker', episode: episode(2, { end_reason: 'max_turns' }), message },
    ]);
    expect(EpisodeSchema.parse(merged)).toEqual(merged);
    expect(merged.steps.map((s) => [s.agent, s.turn, s.proposals[0]?.id, s.message?.from ?? null, s.episode ?? null])).toEqual([
      ['supervisor', 1, 'call_1', null, null],
      ['supervisor', 2, 'call_2', null, null],
      ['worker', 3, 'call_1@a1', 'supervisor', null],
      ['worker', 4, 'call_2@a1', null, null],
    ]);
    expect(merged.totals.turns).toBe(4);
    expect(merged.end_reason).toBe('max_turns');
    expect(merged.memory_carried).toBeUndefined();
  });
});

describe('runTopology', () => {
  it("gives each agent its role, the sender's answer as the next one's only input, and the earlier steps to its defenses", async () => {
    const seen: EpisodeOptions[] = [];
    const run = (o: EpisodeOptions): Promise<{ episode: Episode }> => {
      seen.push(o);
      return Promise.resolve({ episode: episode(1, { final_text: `answer of ${o.agent ?? '?'}` }) });
    };
    const out = await runTopology('supervisor-worker', { task } as EpisodeOptions, run);
    expect(seen.map((o) => [o.agent, parseRole(o.instruction ?? '')?.sends, roleInput(o.instruction ?? '')])).toEqual([
      ['supervisor', true, 'Fix /app/config.ini.'],
      ['worker', false, 'answer of supervisor'],
    ]);
    // the worker never gets the user's goal in its instruction; its defenses keep the user's task
    expect(seen[1]?.instruction).not.toContain('Fix /app/config.ini.');
    expect(seen[1]?.task.instruction).toBe('Fix /app/config.ini.');
    expect(seen[1]?.message).toEqual({ from: 'supervisor', to: 'worker', text: 'answer of supervisor' });
    expect(seen[0]?.before).toBeUndefined();
    expect(seen[1]?.before?.map((s) => s.agent)).toEqual(['supervisor']);
    expect(out.record).toEqual({ kind: 'supervisor-worker', agents: ['supervisor', 'worker'], messages: 1 });
    expect(out.episode.steps.map((s) => s.agent)).toEqual(['supervisor', 'worker']);
  });

  it('ends the chain at a sender without an answer: nothing is sent', async () => {
    let calls = 0;
    const run = (): Promise<{ episode: Episode }> => {
      calls++;
      return Promise.resolve({ episode: episode(3, { end_reason: 'max_turns' }) });
    };
    const out = await runTopology('peer-chain', { task } as EpisodeOptions, run);
    expect(calls).toBe(1);
    expect(out.record).toEqual({ kind: 'peer-chain', agents: ['peer-1'], messages: 0 });
    expect(out.episode.end_reason).toBe('max_turns');
  });

  it("stops an earlier agent's services before the next starts, and folds the last one's into the merged episode", async () => {
    const stopped: string[] = [];
    const run = (o: EpisodeOptions) =>
      Promise.resolve({
        episode: episode(1, { final_text: 'x' }),
        services: {
          commands: 1,
          stop: () => {
            stopped.push(o.agent ?? '?');
            return Promise.resolve(episode(1, { final_text: 'stopped', end_reason: 'done' }));
          },
        },
      });
    const out = await runTopology('peer-chain', { task } as EpisodeOptions, run);
    expect(stopped).toEqual(['peer-1']);
    const final = await out.services?.stop();
    expect(stopped).toEqual(['peer-1', 'peer-2']);
    expect(final?.steps.map((s) => s.agent)).toEqual(['peer-1', 'peer-2']);
    expect(final?.final_text).toBe('stopped');
  });
});
