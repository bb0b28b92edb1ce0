import { describe, expect, it } from 'vitest';
import { PolicySchema } from '../sandbox/policy/index.ts';
import { buildGold, goldPolicy } from './build.ts';
import { deriveGold } from './derive.ts';
import { contextFor, execEv, fileEv, netEv } from './test-support.ts';

const provenance = { image_digest: 'sha256:1', solve_sh_sha256: 'abc' };

describe('goldPolicy', () => {
  const events = [
    fileEv('read', '/app/data.csv'),
    fileEv('read', '/app', { flags: ['O_DIRECTORY'] }),
    fileEv('create', '/app/sedX1'),
    fileEv('rename', '/app/sedX1', { path2: '/app/data.csv' }),
    fileEv('read', '/usr/share/dict/words'),
    execEv('/usr/bin/python3'),
  ];

  it('grants required ∪ support ∪ directories ∪ ephemeral ∪ implicit, as a valid policy', () => {
    const gold = buildGold(deriveGold(events, contextFor()), { taskId: 't', provenance });
    const policy = goldPolicy(gold);
    expect(PolicySchema.safeParse(policy).error).toBeUndefined();
    expect(policy.read).toEqual(expect.arrayContaining(['/app/data.csv', '/app', '/usr/share/dict/words', '/proc/**']));
    expect(policy.write).toEqual(expect.arrayContaining(['/app/data.csv', '/app/*', '/tmp/**', '/dev/null']));
    expect(policy.execute).toEqual(expect.arrayContaining(['/usr/bin/python3.11', '/usr/bin/dash']));
    expect(policy.read).toEqual([...new Set(policy.read)].sort());
    expect(policy.network).toBeUndefined();
  });

  it('grants loopback TCP endpoints and bound ports; drops others', () => {
    const net = [
      netEv('socket'),
      netEv('connect', { address: '127.0.0.1', port: 5432 }),
      netEv('connect', { address: '10.0.0.1', port: 443, errno: 'ENETUNREACH' }),
      netEv('bind', { address: '0.0.0.0', port: 8000 }),
      netEv('bind', { address: '127.0.0.1', port: 0 }),
    ];
    const gold = buildGold(deriveGold(net, contextFor()), { taskId: 't', provenance });
    expect(goldPolicy(gold).network).toEqual({ tcp_connect: [{ host: '127.0.0.1', port: 5432 }], tcp_bind: [8000], allow_all: false });
  });

  it('keeps the network section (empty) when only IP sockets were made', () => {
    const gold = buildGold(deriveGold([netEv('socket')], contextFor()), { taskId: 't', provenance });
    expect(goldPolicy(gold).network).toEqual({ tcp_connect: [], tcp_bind: [], allow_all: false });
  });
});
