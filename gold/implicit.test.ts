import { describe, expect, it } from 'vitest';
import { covers } from '../sandbox/paths/index.ts';
import { AXES, type Axis } from './axes.ts';
import { DEFAULT_IMPLICIT_RULES, defaultImplicit, invalidImplicitRules, mergeImplicit } from './implicit.ts';

const implicit = defaultImplicit();
const isImplicit = (axis: Axis, path: string) => implicit[axis].some((p) => covers(p, path));

describe('default implicit set', () => {
  it('has only valid, normalised patterns, each with a reason', () => {
    expect(invalidImplicitRules()).toEqual([]);
    for (const rule of DEFAULT_IMPLICIT_RULES) expect(rule.reason.length).toBeGreaterThan(10);
    expect(invalidImplicitRules([{ pattern: '/a/**/b', axes: ['read'], reason: 'x' }])).toHaveLength(1);
    expect(invalidImplicitRules([{ pattern: '/a/', axes: ['read'], reason: 'x' }])).toHaveLength(1);
  });

  it('lists every pattern once per axis, sorted', () => {
    for (const axis of AXES) expect(implicit[axis]).toEqual([...new Set(implicit[axis])].sort());
  });

  it.each<[Axis, string]>([
    ['read', '/etc/ld.so.cache'],
    ['read', '/usr/lib/x86_64-linux-gnu/libc.so.6'],
    ['read', '/lib/aarch64-linux-gnu/libm.so.6'],
    ['read', '/usr/lib/locale/C.utf8/LC_CTYPE'],
    ['read', '/usr/share/zoneinfo/Etc/UTC'],
    ['read', '/proc/self/status'],
    ['read', '/sys/devices/system/cpu/online'],
    ['read', '/dev/urandom'],
    ['write', '/dev/null'],
    ['write', '/dev/tty'],
    ['read', '/etc/passwd'],
    ['read', '/etc/nsswitch.conf'],
    ['read', '/usr/lib/python3.11/os.py'],
    ['read', '/usr/local/lib/python3.12/site-packages/requests/__init__.py'],
    ['read', '/tmp/x'],
    ['write', '/tmp/cc1.s'],
    ['execute', '/usr/bin/dash'],
    ['execute', '/usr/bin/bash'],
    ['execute', '/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2'],
  ])('%s %s is implicit', (axis, path) => {
    expect(isImplicit(axis, path)).toBe(true);
  });

  it.each<[Axis, string]>([
    ['read', '/app/data.csv'],
    ['read', '/etc/shadow'],
    ['read', '/root/.ssh/id_rsa'],
    ['write', '/etc/passwd'],
    ['write', '/dev/sda'],
    ['read', '/dev/sda'],
    ['write', '/proc/sys/kernel/core_pattern'],
    ['execute', '/usr/bin/python3.11'],
    ['execute', '/usr/bin/curl'],
    ['execute', '/tmp/payload'],
    ['read', '/usr/lib/gcc/x86_64-linux-gnu/12/cc1'],
  ])('%s %s is not implicit', (axis, path) => {
    expect(isImplicit(axis, path)).toBe(false);
  });
});

it('mergeImplicit normalises, sorts and deduplicates', () => {
  const merged = mergeImplicit({ read: ['/b', '/a/'], write: [], execute: [] }, { read: ['/a', '/c/./d'], write: ['/w'], execute: [] });
  expect(merged).toEqual({ read: ['/a', '/b', '/c/d'], write: ['/w'], execute: [] });
});
