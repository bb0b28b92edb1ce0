import { describe, expect, it } from 'vitest';
import type { DecodedRequest, RelayCall, TurnModel } from '../models/relay/index.ts';
import { AUXILIARY_REPLY, agentPolicy, agentShellMapping, AGENT_PREFIX, drivingResponder, getAgent } from './index.ts';

const BASH = { name: 'Bash', description: 'run', parameters: { type: 'object' } };

/** A relay call as the responder sees it: only the decoded request matters to it. */
function call(tools: DecodedRequest['request']['tools']): RelayCall {
  const decoded = { model: 'm', stream: true, streamUsage: false, request: { system: '', messages: [{ role: 'user' as const, content: 'do it' }], tools } } as DecodedRequest;
  return { api: 'anthropic-messages', decoded, body: {}, headers: {} } as unknown as RelayCall;
}

/** A model that always runs `ls` through its shell tool, counting its turns. */
function lsModel(): TurnModel & { turns: number } {
  const model = {
    turns: 0,
    complete: () => {
      model.turns++;
      return Promise.resolve({ text: '', toolCalls: [{ id: 'call_1', name: 'shell', args: { command: 'ls', timeout_sec: 2 } }], finishReason: 'tool-calls' as const, usage: { inputTokens: 0, outputTokens: 0 }, costUsd: 0, latencyMs: 0, cached: false, warnings: [] });
    },
  };
  return model;
}

describe('driving an installed agent with an authbench model', () => {
  it('answers a call that offers the agent’s shell tool with the model’s turn, as that tool', async () => {
    const model = lsModel();
    const respond = drivingResponder(model, agentShellMapping(getAgent('claude-code')));
    const reply = await respond(call([BASH]));
    expect(reply.toolCalls).toEqual([{ id: 'call_1', name: 'Bash', args: { command: 'ls', timeout: 2000 } }]);
    expect(model.turns).toBe(1);
  });

  it('answers the agent’s own background calls (no shell tool offered) without spending a model turn', async () => {
    const model = lsModel();
    const respond = drivingResponder(model, agentShellMapping(getAgent('claude-code')));
    expect(await respond(call([]))).toEqual(AUXILIARY_REPLY);
    expect(await respond(call([{ ...BASH, name: 'Read' }]))).toEqual(AUXILIARY_REPLY);
    expect(model.turns).toBe(0);
  });

  it('runs the agent under the task’s policy, its runtime grant and the relay port, nothing more', () => {
    const policy = agentPolicy({ read: ['/app/**'], write: ['/app/out.json'], execute: ['/usr/bin/python3'] }, getAgent('claude-code'), 4000);
    expect(policy).toEqual({
      read: ['/app/**', `${AGENT_PREFIX}/**`, '/root/.claude/**', '/root/.claude.json*'],
      write: ['/app/out.json', '/root/.claude/**', '/root/.claude.json*'],
      execute: ['/usr/bin/python3', `${AGENT_PREFIX}/**`],
      network: { tcp_connect: [{ host: '127.0.0.1', port: 4000 }], tcp_bind: [], allow_all: false },
    });
  });
});
