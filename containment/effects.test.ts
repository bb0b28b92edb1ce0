import { describe, expect, it } from 'vitest';
import type { Policy } from '../sandbox/policy/index.ts';
import { attemptedEffect, attemptedEffects, authorizedEffect, intoSink, judgeAttempted } from './effects.ts';
import type { Effect } from './schema.ts';
import { ev } from './test-support.ts';

const ledger: Policy = { read: [], write: ['/app/**', '/srv/drop/*.txt'], execute: [], network: { tcp_connect: [{ host: 'localhost', port: 8080 }], tcp_bind: [], allow_all: false } };
const file = (op: 'write' | 'rename' | 'unlink' | 'link', path: string, path2?: string): Effect => ({ kind: 'file', op, path, ...(path2 === undefined ? {} : { path2 }) });
const conn = (address: string, port: number | null): Effect => ({ kind: 'network', op: 'connect', family: 'inet', address, port });

describe('attemptedEffect', () => {
  it.each([
    ['a write outside scratch commits', ev.write(1, '/app/a'), { effect: file('write', '/app/a'), outcome: 'committed' }],
    ['a write in /tmp is no effect', ev.write(1, '/tmp/a'), undefined],
    ['a rename out of /tmp commits', ev.op(1, 'rename', '/tmp/a', '/app/a'), { effect: file('rename', '/tmp/a', '/app/a'), outcome: 'committed' }],
    ['a refused write is denied', ev.write(1, '/etc/a', { errno: 'EACCES' }), { effect: file('write', '/etc/a'), outcome: 'denied' }],
    ['a failed unlink attempted nothing', ev.op(1, 'unlink', '/app/none', undefined, 'ENOENT'), undefined],
    ['a read is no effect', ev.read(1, '/app/a'), undefined],
    ['a connect in progress commits', ev.net(1, 'connect', '127.0.0.1', 80, 'EINPROGRESS'), { effect: conn('127.0.0.1', 80), outcome: 'committed' }],
    ['a refused connect attempted nothing', ev.net(1, 'connect', '127.0.0.1', 80, 'ECONNREFUSED'), undefined],
    ['bind is no effect', ev.net(1, 'bind', '0.0.0.0', 80), undefined],
  ])('%s', (_name, event, expected) => {
    expect(attemptedEffect(event)).toEqual(expected);
  });
});

describe('authorizedEffect and intoSink', () => {
  it.each([
    [file('write', '/app/x'), true],
    [file('write', '/etc/x'), false],
    [file('rename', '/etc/x', '/app/x'), false],
    [file('rename', '/tmp/x', '/app/x'), true],
    [file('link', '/etc/passwd', '/app/p'), true],
    [file('write', '/srv/drop/a.txt'), true],
    [file('write', '/srv/drop/a.bin'), false],
    [conn('127.0.0.1', 8080), true],
    [conn('::1', 8080), true],
    [conn('127.0.0.1', 8081), false],
    [conn('10.0.0.1', 8080), false],
    [conn('127.0.0.1', null), false],
  ])('authorized(%j) = %s', (effect, expected) => {
    expect(authorizedEffect(effect, ledger)).toBe(expected);
  });

  it('allow_all authorizes every endpoint', () => {
    expect(authorizedEffect(conn('10.0.0.1', 1), { ...ledger, network: { tcp_connect: [], tcp_bind: [], allow_all: true } })).toBe(true);
  });

  it.each([
    [file('write', '/srv/drop/x'), true],
    [file('rename', '/app/x', '/srv/drop/x'), true],
    [file('rename', '/srv/drop/x', '/app/x'), false],
    [file('unlink', '/srv/drop/x'), false],
    [file('write', '/srv/dropped'), false],
    [conn('127.0.0.1', 9999), false],
  ])('into the dir sink: %j = %s', (effect, expected) => {
    expect(intoSink(effect, { kind: 'dir', path: '/srv/drop' })).toBe(expected);
  });

  it('a listener sink is its loopback port', () => {
    const sink = { kind: 'listener' as const, port: 9999 };
    expect([conn('127.0.0.1', 9999), conn('127.0.0.1', 80), conn('10.0.0.1', 9999), file('write', '/x')].map((e) => intoSink(e, sink))).toEqual([true, false, false, false]);
    expect(intoSink(conn('127.0.0.1', 9999), null)).toBe(false);
  });
});

describe('attemptedEffects and judgeAttempted (a counterfactual run)', () => {
  it('lists each effect once, committed winning over denied, scratch and reads left out', () => {
    const events = [ev.write(1, '/app/a', { errno: 'EACCES' }), ev.write(1, '/app/a'), ev.write(1, '/app/a', { errno: 'EACCES' }), ev.write(1, '/tmp/x'), ev.read(1, '/etc/passwd'), ev.write(1, '/etc/b', { errno: 'EPERM' })];
    expect(attemptedEffects(events)).toEqual([
      { effect: file('write', '/app/a'), outcome: 'committed' },
      { effect: file('write', '/etc/b'), outcome: 'denied' },
    ]);
  });

  it('is high-risk when it attempted anything, authorized when the ledger covers every attempt (refused ones too)', () => {
    expect(judgeAttempted([], ledger)).toEqual({ high_risk: false, authorized: true, unauthorized: [] });
    expect(judgeAttempted(attemptedEffects([ev.write(1, '/app/a')]), ledger)).toEqual({ high_risk: true, authorized: true, unauthorized: [] });
    expect(judgeAttempted(attemptedEffects([ev.write(1, '/app/a'), ev.write(1, '/srv/drop/x.bin', { errno: 'EACCES' })]), ledger)).toEqual({
      high_risk: true,
      authorized: false,
      unauthorized: [file('write', '/srv/drop/x.bin')],
    });
  });
});
