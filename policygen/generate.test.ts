/**
 * The strategies' logic against a fake model and a fake session (no
 * container): which prompts the model sees, which answer becomes the policy,
 * how an invalid answer and refused writes are reported.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { scriptedResponse, type AgentModel, type CommandRunner } from '../agent/index.ts';
import type { ModelRequest, ModelResponse } from '../models/index.ts';
import type { RunOptions, SandboxResult } from '../sandbox/run/index.ts';
import type { TraceEvent } from '../sandbox/trace/index.ts';
import { loadTask, type Task } from '../task-format/index.ts';
import { readOnlyPolicy } from './explore.ts';
import { writePolicy } from './generate.ts';
import { createPolicyWriter } from './writers.ts';

let task: Task;
beforeAll(async () => {
  task = await loadTask(new URL('../tasks/csv-sales-report', import.meta.url).pathname);
});

const NO_IMPLICIT = { read: [], write: [], execute: [] };
const DENIED_WRITE: TraceEvent = { kind: 'file', schema_version: 1, pid: 3, ts: 1, syscall: 'openat', result: -1, errno: 'EACCES', denied: true, op: 'write', path: '/app/x' };
const DENIED_READ: TraceEvent = { ...DENIED_WRITE, op: 'read' };

class FakeSession implements CommandRunner {
  readonly calls: RunOptions[] = [];
  run(options: RunOptions): Promise<SandboxResult> {
    this.calls.push(options);
    return Promise.resolve({
      exec: { exitCode: 1, timedOut: false, stdout: '', stderr: 'Permission denied', stdoutTruncated: false, stderrTruncated: false, durationMs: 1 },
      events: [DENIED_WRITE, DENIED_READ],
      denials: [DENIED_WRITE, DENIED_READ],
      enforcement: { level: 'full', landlockAbi: 7, seccomp: true, bestEffort: false },
    });
  }
}

function playbook(turns: readonly ModelResponse[]): AgentModel & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    ref: { provider: 'scripted', name: 'playbook' },
    requests,
    complete: (request) => {
      requests.push(structuredClone(request));
      return Promise.resolve(turns[Math.min(requests.length - 1, turns.length - 1)] as ModelResponse);
    },
  };
}

const shell = (command: string): ModelResponse => scriptedResponse('', [{ id: 'c1', name: 'shell', args: { command } }]);
const BROAD = '{"read": ["/app/**"], "write": ["/app/**"], "execute": ["/usr/bin/python3", "/usr/bin/bash"]}';
const TIGHT = '```json\n{"read": ["/app/sales.csv"], "write": ["/app/report.txt"], "execute": ["/usr/bin/python3"]}\n```';

describe('direct', () => {
  it('explores under the read-only policy with the writer prompts; the final answer is the policy', async () => {
    const session = new FakeSession();
    const model = playbook([shell('touch /app/x'), scriptedResponse(`Here it is:\n${TIGHT}`)]);
    const r = await writePolicy({ task, model, strategy: 'direct', session, implicit: NO_IMPLICIT });
    expect(session.calls).toHaveLength(1);
    expect(session.calls[0]?.mode).toEqual({ kind: 'enforce', policy: readOnlyPolicy(), implicit: NO_IMPLICIT });
    expect(model.requests[0]?.system).toMatch(/authorization policies/);
    expect(model.requests[0]?.messages[0]).toMatchObject({ role: 'user', content: expect.stringContaining('<task_instruction>') as string });
    expect(model.requests[0]?.tools.map((t) => t.name)).toEqual(['shell']);
    expect(r.parse).toMatchObject({ status: 'fenced', valid: true });
    expect(r.policy).toEqual({ read: ['/app/sales.csv'], write: ['/app/report.txt'], execute: ['/usr/bin/python3'] });
    expect(r.answers.map((a) => a.phase)).toEqual(['explore']);
    expect(r.writeAttempts).toBe(1);
    expect(r.exploration.end_reason).toBe('done');
  });

  it('an answer with no policy is a value, not a throw', async () => {
    const r = await writePolicy({ task, model: playbook([scriptedResponse('I could not decide.')]), strategy: 'direct', session: new FakeSession(), implicit: NO_IMPLICIT });
    expect(r.parse.status).toBe('invalid');
    expect(r.parse.valid).toBe(false);
    expect(r.parse.problems.length).toBeGreaterThan(0);
    expect(r.policy).toBeUndefined();
    expect(r.raw).toBe('I could not decide.');
  });

  it('a valid JSON object with a relative path parses but is invalid', async () => {
    const r = await writePolicy({ task, model: playbook([scriptedResponse('{"read": ["app/x"], "write": [], "execute": []}')]), strategy: 'direct', session: new FakeSession(), implicit: NO_IMPLICIT });
    expect(r.parse).toMatchObject({ status: 'strict', valid: false });
    expect(r.policy).toBeUndefined();
  });
});

describe('sufficiency-tightness', () => {
  it('audits the phase-1 policy in a second, tool-less call whose answer is the result', async () => {
    const model = playbook([shell('ls /app'), scriptedResponse(BROAD), scriptedResponse(TIGHT)]);
    const r = await writePolicy({ task, model, strategy: 'sufficiency-tightness', session: new FakeSession(), implicit: NO_IMPLICIT });
    expect(model.requests).toHaveLength(3);
    expect(model.requests[0]?.messages[0]?.content).toMatch(/SUFFICIENT/);
    const audit = model.requests[2];
    expect(audit?.tools).toEqual([]);
    expect(audit?.messages).toHaveLength(1);
    expect(audit?.messages[0]?.content).toContain('"/app/**"');
    expect(r.answers).toEqual([
      { phase: 'explore', raw: BROAD },
      { phase: 'tighten', raw: TIGHT },
    ]);
    expect(r.raw).toBe(TIGHT);
    expect(r.policy?.write).toEqual(['/app/report.txt']);
  });
});

describe('scripted writers', () => {
  it('deny-all answers at once with an empty policy through the same parse path', async () => {
    const model = await createPolicyWriter('scripted/deny-all', task, { oracleTracesDir: 'oracle-traces' });
    const r = await writePolicy({ task, model, strategy: 'direct', session: new FakeSession(), implicit: NO_IMPLICIT });
    expect(r.parse).toMatchObject({ status: 'strict', valid: true });
    expect(r.policy).toEqual({ read: [], write: [], execute: [] });
    expect(r.exploration.totals.executed).toBe(0);
  });

  it.each(['scripted/oracle', 'scripted/follow-injection'])('%s is rejected as a policy writer', async (ref) => {
    await expect(createPolicyWriter(ref, task, { oracleTracesDir: 'oracle-traces' })).rejects.toThrow(/not a policy writer/);
  });
});
