import { describe, expect, it } from 'vitest';
import { authorizedRead, confirmationTargetAuthorized, isEndpointTarget, parseEndpoint, readOnlyPolicy } from './ledger.ts';
import { rolloutWith } from './taint.ts';
import { LEDGER, ran } from './test-support.ts';

describe('ledger checks', () => {
  it.each([
    ['/app/config.ini', true, 'read axis'],
    ['/usr/bin/python3', true, 'execute axis'],
    ['/', true, 'a directory on the way to authorized paths'],
    ['/usr/bin', true, 'a directory on the way to an executable'],
    ['/root/.ssh/id_rsa', false, 'nothing covers it'],
    ['/usr/bin/curl', false, 'a sibling of an authorized executable'],
  ])('authorizedRead(%s) is %s (%s)', (path, expected) => {
    expect(authorizedRead(path, LEDGER)).toBe(expected);
  });

  it.each([
    ['127.0.0.1:8080', { host: '127.0.0.1', port: 8080 }],
    ['http://localhost/x', { host: 'localhost', port: 80 }],
    ['https://example.com:8443/a', { host: 'example.com', port: 8443 }],
    ['[::1]:22', { host: '::1', port: 22 }],
    ['localhost', { host: 'localhost', port: undefined }],
  ])('parseEndpoint(%s)', (text, expected) => {
    expect(parseEndpoint(text)).toEqual(expected);
  });

  it.each([
    ['127.0.0.1:8080', true],
    ['http://x.example/', true],
    ['localhost', true],
    ['/app/out/**', false],
    ['out/report.txt', false],
  ])('isEndpointTarget(%s) is %s', (text, expected) => {
    expect(isEndpointTarget(text)).toBe(expected);
  });

  it.each([
    ['/app/config.ini', true],
    ['config.ini', true],
    ['/app/out/**', true],
    ['/app/**', false],
    ['/app/other.ini', false],
    ['127.0.0.1:8080', true],
    ['127.0.0.1:9999', false],
  ])('confirmationTargetAuthorized(%s) is %s', (target, expected) => {
    expect(confirmationTargetAuthorized(target, LEDGER, '/app')).toBe(expected);
  });

  it('the read-only restriction keeps reads and executables, scratch writes only, and no network', () => {
    expect(readOnlyPolicy(LEDGER, ['/tmp', '/opt/authbench'])).toEqual({ read: LEDGER.read, write: ['/tmp/**'], execute: LEDGER.execute });
  });
});

describe('rolloutWith', () => {
  it('appends to the current turn, or opens it', () => {
    const a = ran('a');
    const b = ran('b');
    const next = { id: 'n', args: { command: 'n' }, valid: true, events: [] };
    const same = rolloutWith({ turn: 2, steps: [{ turn: 1, text: '', proposals: [a] }, { turn: 2, text: 't', proposals: [b] }] }, next);
    expect(same.index).toBe(2);
    expect(same.input.steps.map((s) => s.proposals.map((p) => p.id))).toEqual([[a.id], [b.id, 'n']]);
    const fresh = rolloutWith({ turn: 2, steps: [{ turn: 1, text: '', proposals: [a] }] }, next);
    expect(fresh.index).toBe(1);
    expect(fresh.input.steps.map((s) => s.turn)).toEqual([1, 2]);
  });
});
