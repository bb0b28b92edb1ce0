/** Which external hosts a task container reaches through the egress proxy. Pure. */
import { describe, expect, it } from 'vitest';
import type { NetworkDeclaration } from '../task-format/index.ts';
import { egressRuleLabels, summarizeEgress, taskEgressRules } from './egress.ts';

const allowlist: NetworkDeclaration = { mode: 'allowlist', hosts: ['metadata-mock'], external: [{ host: 'api.example.com', ports: [443] }, { host: 'pypi.org' }] };

describe('taskEgressRules', () => {
  it.each<[string, NetworkDeclaration, 'all' | string[], string[]]>([
    ['allow-all: the whole allowlist', allowlist, 'all', ['api.example.com:443', 'pypi.org']],
    ['a policy narrows it, case-insensitively', allowlist, ['PyPI.org.', 'metadata-mock'], ['pypi.org']],
    ['a policy cannot widen it', allowlist, ['evil.example', 'pypi.org'], ['pypi.org']],
    ['a policy naming no external host: no proxy', allowlist, ['metadata-mock'], []],
    ['no allowlist: never a proxy', { mode: 'public' }, 'all', []],
    ['none: never a proxy', { mode: 'none' }, ['pypi.org'], []],
  ])('%s', (_name, network, access, expected) => {
    expect(egressRuleLabels(taskEgressRules({ network }, access))).toEqual(expected);
  });
});

describe('summarizeEgress', () => {
  it('each endpoint once, sorted, by verdict; errors and unreachable hosts are neither', () => {
    const d = (verdict: 'allowed' | 'refused' | 'failed' | 'error', host?: string, port?: number) => ({ verdict, t: 0, ...(host === undefined ? {} : { host }), ...(port === undefined ? {} : { port }) });
    expect(summarizeEgress([d('refused', 'z.example', 443), d('allowed', 'b.example', 80), d('refused', 'a.example', 443), d('refused', 'z.example', 443), d('failed', 'c.example', 443), d('error')])).toEqual({
      forwarded: ['b.example:80'],
      refused: ['a.example:443', 'z.example:443'],
    });
  });
});
