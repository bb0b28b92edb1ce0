/**
 * Builders shared by the gold tests: trace events by hand, a derivation
 * context over a literal image tree, and the recorded strace fixtures parsed
 * with the real parser. Not exported from index.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSnapshot, viewSnapshot, type TreeEntry } from '../sandbox/paths/index.ts';
import {
  isDenial,
  parseStrace,
  TRACE_EVENT_SCHEMA_VERSION,
  type ExecEvent,
  type FileEvent,
  type NetworkEvent,
  type TraceEvent,
} from '../sandbox/trace/index.ts';
import type { AxisLists } from './axes.ts';
import type { DeriveContext } from './derive.ts';
import { defaultImplicit } from './implicit.ts';

const head = { schema_version: TRACE_EVENT_SCHEMA_VERSION, ts: 0 };

function outcome(errno: string | undefined) {
  return errno === undefined ? { result: 0, denied: false } : { result: -1, errno, denied: isDenial(errno) };
}

export function fileEv(op: FileEvent['op'], path: string, extra: Partial<FileEvent> & { errno?: string } = {}): FileEvent {
  const { errno, ...rest } = extra;
  return { kind: 'file', ...head, pid: 1, syscall: 'openat', ...outcome(errno), op, path, ...rest };
}

export function execEv(path: string, extra: Partial<ExecEvent> & { errno?: string } = {}): ExecEvent {
  const { errno, ...rest } = extra;
  return { kind: 'exec', ...head, pid: 1, syscall: 'execve', ...outcome(errno), path, argv: [path], cwd: '/app', ...rest };
}

export function netEv(op: NetworkEvent['op'], extra: Partial<NetworkEvent> & { errno?: string } = {}): NetworkEvent {
  const { errno, ...rest } = extra;
  return { kind: 'network', ...head, pid: 1, syscall: op, ...outcome(errno), op, family: 'inet', domain: 'AF_INET', ...rest };
}

/** A small merged-/usr Debian image: shells, python, coreutils, /app, /tmp. */
export const BASE_TREE: readonly TreeEntry[] = [
  { path: '/bin', type: 'symlink', link: 'usr/bin' },
  { path: '/lib', type: 'symlink', link: 'usr/lib' },
  { path: '/lib64', type: 'symlink', link: 'usr/lib64' },
  { path: '/usr/lib64/ld-linux-x86-64.so.2', type: 'symlink', link: '../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2' },
  { path: '/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2', type: 'file', mode: 0o755 },
  { path: '/usr/lib/x86_64-linux-gnu/libc.so.6', type: 'file' },
  { path: '/usr/bin/python3', type: 'symlink', link: 'python3.11' },
  { path: '/usr/bin/python3.11', type: 'file', mode: 0o755 },
  { path: '/usr/bin/sh', type: 'symlink', link: 'dash' },
  { path: '/usr/bin/dash', type: 'file', mode: 0o755 },
  { path: '/usr/bin/bash', type: 'file', mode: 0o755 },
  { path: '/usr/bin/cat', type: 'file', mode: 0o755 },
  { path: '/usr/bin/sed', type: 'file', mode: 0o755 },
  { path: '/usr/bin/gcc', type: 'symlink', link: 'gcc-12' },
  { path: '/usr/bin/gcc-12', type: 'file', mode: 0o755 },
  { path: '/usr/libexec/tool', type: 'file', mode: 0o755 },
  { path: '/app/data.csv', type: 'file' },
  { path: '/app/old.csv', type: 'file' },
  { path: '/app/run.sh', type: 'file', mode: 0o755 },
  { path: '/app/sub', type: 'dir' },
  { path: '/app/sub/keep.txt', type: 'file' },
  { path: '/srv/outbox', type: 'dir' },
  { path: '/etc/app.conf', type: 'file' },
  { path: '/tmp', type: 'dir' },
];

export interface ContextOptions {
  tree?: readonly TreeEntry[];
  workdir?: string;
  scoredRoots?: AxisLists;
  implicit?: AxisLists;
  interpreter?: DeriveContext['interpreter'];
}

export function contextFor(options: ContextOptions = {}): DeriveContext {
  const view = viewSnapshot(buildSnapshot(options.tree ?? BASE_TREE));
  return {
    workdir: options.workdir ?? '/app',
    scoredRoots: options.scoredRoots,
    implicit: options.implicit ?? defaultImplicit(),
    realpath: (p) => view.realpath(p),
    isDirectory: (p) => {
      const e = view.resolve(p);
      return e === undefined ? undefined : e.type === 'dir';
    },
    interpreter: options.interpreter,
  };
}

const FIXTURES = join(import.meta.dirname, '..', 'sandbox', 'trace', 'fixtures');

/** A recorded strace fixture parsed with the real parser. */
export function fixtureEvents(name: string): TraceEvent[] {
  const expect = JSON.parse(readFileSync(join(FIXTURES, `${name}.expect.json`), 'utf8')) as { cwd: string };
  return parseStrace(readFileSync(join(FIXTURES, `${name}.strace`), 'utf8'), { cwd: expect.cwd });
}

/** Harness files the fixtures' runner read (the traced script itself). */
export const FIXTURE_HARNESS: AxisLists = { read: ['/fixture/**'], write: [], execute: [] };
