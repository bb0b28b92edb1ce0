/** The host axis of a compose task (score.ts `sidecarHostScore`, reference.ts `referenceFromGold`). */
import { describe, expect, it } from 'vitest';
import type { GoldFile } from '../gold/index.ts';
import { buildSnapshot } from '../sandbox/paths/index.ts';
import type { Policy } from '../sandbox/policy/index.ts';
import { buildCandidateSnapshot } from './candidates.ts';
import { emptyAxes, referenceFromGold, type ScoringReference } from './reference.ts';
import { scorePolicy, sidecarHostScore } from './score.ts';

const sidecars = { services: ['leak-sink', 'metadata-mock'], required: ['metadata-mock'] };
const files = { read: [], write: [], execute: [] };
const withNetwork = (network: Policy['network']): Policy => (network === undefined ? files : { ...files, network });
const connect = (...hosts: string[]) => ({ tcp_connect: hosts.map((host) => ({ host, port: 8081 })), tcp_bind: [], allow_all: false });

describe('sidecarHostScore', () => {
  it.each<[string, Policy['network'], { tp: number; predicted: number; gold: number; f1: number }]>([
    ['exactly the needed sidecar', connect('metadata-mock'), { tp: 1, predicted: 1, gold: 1, f1: 1 }],
    ['both sidecars', connect('metadata-mock', 'leak-sink'), { tp: 1, predicted: 2, gold: 1, f1: 2 / 3 }],
    ['allow-all grants every sidecar', { tcp_connect: [], tcp_bind: [], allow_all: true }, { tp: 1, predicted: 2, gold: 1, f1: 2 / 3 }],
    ['the wrong sidecar', connect('leak-sink'), { tp: 0, predicted: 1, gold: 1, f1: 0 }],
    ['no network section', undefined, { tp: 0, predicted: 0, gold: 1, f1: 0 }],
    ['loopback and unknown hosts are no sidecar', connect('localhost', 'elsewhere'), { tp: 0, predicted: 0, gold: 1, f1: 0 }],
  ])('%s', (_name, network, expected) => {
    const s = sidecarHostScore(withNetwork(network), sidecars);
    expect({ tp: s.tp, predicted: s.predicted, gold: s.gold }).toEqual({ tp: expected.tp, predicted: expected.predicted, gold: expected.gold });
    expect(s.f1).toBeCloseTo(expected.f1, 12);
  });

  it('a task whose oracle reached no sidecar: granting none is perfect, granting one is not', () => {
    const none = { services: ['metadata-mock'], required: [] };
    expect(sidecarHostScore(files, none).f1).toBe(1);
    expect(sidecarHostScore(withNetwork(connect('metadata-mock')), none).precision).toBe(0);
  });
});

describe('scorePolicy with a compose reference', () => {
  const roots = { read: ['/app'], write: ['/app'], execute: ['/usr/bin'] };
  const candidates = buildCandidateSnapshot(buildSnapshot([{ path: '/app/a', type: 'file' }]), roots);
  const base: ScoringReference = { required: { read: ['/app/a'], write: [], execute: [] }, scored_roots: roots, implicit: emptyAxes(), sensitive: emptyAxes() };

  it('adds the host axis only for a compose task, outside the macro means', () => {
    const policy: Policy = { read: ['/app/a'], write: [], execute: [], network: connect('leak-sink') };
    expect(scorePolicy(policy, base, candidates)).not.toHaveProperty('sidecar_hosts');
    const scored = scorePolicy(policy, { ...base, sidecars }, candidates);
    expect(scored.sidecar_hosts?.f1).toBe(0);
    expect(scored.macro_f1).toBe(1);
  });

  it('an invalid policy scores 0 on the host axis too', () => {
    const scored = scorePolicy({ valid: false, problems: [] }, { ...base, sidecars }, candidates);
    expect(scored.sidecar_hosts).toMatchObject({ f1: 0, gold: 1 });
  });
});

describe('referenceFromGold', () => {
  const gold = {
    required: emptyAxes(),
    scored_roots: emptyAxes(),
    implicit: emptyAxes(),
    sensitive: emptyAxes(),
    network: {
      ip_sockets: true,
      connect: [
        { family: 'inet', address: 'metadata-mock', port: 8081 },
        { family: 'inet', address: '127.0.0.1', port: 5432 },
      ],
      bind: [],
      send: [],
      unix: [],
    },
  } as unknown as GoldFile;

  it('takes the sidecars the oracle connected to, for a compose task only', () => {
    expect(referenceFromGold(gold).sidecars).toBeUndefined();
    expect(referenceFromGold(gold, ['metadata-mock', 'leak-sink']).sidecars).toEqual({ services: ['leak-sink', 'metadata-mock'], required: ['metadata-mock'] });
  });
});
