import { Readable } from 'node:stream';
import * as tarStream from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { directoryFiles, tarOf, validationBundleEntries, type BundleEntry, installBundleOf } from './bundle.ts';

interface Header {
  name: string;
  type: string;
  mode: number;
  uid: number;
  gid: number;
  linkname: string | null;
  body: string;
}

async function headers(tar: Buffer): Promise<Header[]> {
  const out: Header[] = [];
  const extract = tarStream.extract();
  const done = new Promise<void>((resolve, reject) => {
    extract.on('entry', (h, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c) => chunks.push(c as Buffer));
      stream.on('end', () => {
        out.push({ name: h.name, type: h.type ?? '', mode: h.mode ?? -1, uid: h.uid ?? -1, gid: h.gid ?? -1, linkname: h.linkname ?? null, body: Buffer.concat(chunks).toString() });
        next();
      });
    });
    extract.on('finish', () => resolve());
    extract.on('error', reject);
  });
  Readable.from([tar]).pipe(extract);
  await done;
  return out;
}

const tests: BundleEntry[] = [
  { type: 'directory', name: 'tests', mode: 0o755 },
  { type: 'file', name: 'tests/test.sh', mode: 0o755, content: Buffer.from('#!/bin/bash\n') },
  { type: 'directory', name: 'tests/data', mode: 0o700 },
  { type: 'symlink', name: 'tests/data/link', linkname: '../test.sh' },
];

describe('validationBundleEntries', () => {
  it('puts the tests, an empty verifier directory and the plugin in one list, parents first', () => {
    const entries = validationBundleEntries({ tests, verifierLogs: '/logs/verifier', harnessDir: '/.authbench-validation-ab', pythonFiles: { 'plugin.py': 'x = 1\n' } });
    expect(entries.map((e) => `${e.type} ${e.name}`)).toEqual([
      'directory tests',
      'file tests/test.sh',
      'directory tests/data',
      'symlink tests/data/link',
      'directory logs/verifier',
      'directory .authbench-validation-ab',
      'directory .authbench-validation-ab/python',
      'file .authbench-validation-ab/python/plugin.py',
    ]);
  });

  it('refuses names that would leave / and paths that are not absolute', () => {
    expect(() => validationBundleEntries({ tests: [{ type: 'directory', name: '../etc', mode: 0o755 }], verifierLogs: '/logs/verifier', harnessDir: '/h', pythonFiles: {} })).toThrow(/below \//);
    expect(() => validationBundleEntries({ tests, verifierLogs: 'logs/verifier', harnessDir: '/h', pythonFiles: {} })).toThrow(/absolute/);
    expect(() => validationBundleEntries({ tests, verifierLogs: '/logs/verifier', harnessDir: '/h', pythonFiles: { '../x.py': '' } })).toThrow(/below \//);
  });
});

describe('tarOf', () => {
  it('writes every entry root-owned with its mode, content and link target', async () => {
    const entries = validationBundleEntries({ tests, verifierLogs: '/logs/verifier', harnessDir: '/.h', pythonFiles: { 'p.py': 'print(1)\n' } });
    const got = await headers(await tarOf(entries));
    expect(got.map((h) => h.name)).toEqual(entries.map((e) => e.name));
    expect(got.every((h) => h.uid === 0 && h.gid === 0)).toBe(true);
    expect(got.find((h) => h.name === 'tests/test.sh')).toMatchObject({ type: 'file', mode: 0o755, body: '#!/bin/bash\n' });
    expect(got.find((h) => h.name === 'tests/data')).toMatchObject({ type: 'directory', mode: 0o700 });
    expect(got.find((h) => h.name === 'tests/data/link')).toMatchObject({ type: 'symlink', linkname: '../test.sh' });
    expect(got.find((h) => h.name === 'logs/verifier')).toMatchObject({ type: 'directory', mode: 0o755 });
    expect(got.find((h) => h.name === '.h/python/p.py')).toMatchObject({ type: 'file', mode: 0o644, body: 'print(1)\n' });
  });
});

describe('directoryFiles', () => {
  it('returns the regular files directly in the archived directory, anything else as other', async () => {
    const tar = await tarOf([
      { type: 'directory', name: 'verifier', mode: 0o755 },
      { type: 'file', name: 'verifier/reward.txt', mode: 0o644, content: Buffer.from('1\n') },
      { type: 'symlink', name: 'verifier/junit-utility.xml', linkname: '/etc/shadow' },
      { type: 'directory', name: 'verifier/sub', mode: 0o755 },
      { type: 'file', name: 'verifier/sub/reward.txt', mode: 0o644, content: Buffer.from('0\n') },
    ]);
    const files = await directoryFiles(tar, 'verifier');
    expect(files?.get('reward.txt')).toEqual({ type: 'file', content: Buffer.from('1\n') });
    expect(files?.get('junit-utility.xml')).toEqual({ type: 'other' });
    expect(files?.get('sub')).toEqual({ type: 'other' });
    expect([...(files?.keys() ?? [])].sort()).toEqual(['junit-utility.xml', 'reward.txt', 'sub']);
  });

  it('is undefined when the archived path is not a directory (a symlink the daemon archived as such)', async () => {
    const tar = await tarOf([{ type: 'symlink', name: 'verifier', linkname: '/tmp/elsewhere' }]);
    expect(await directoryFiles(tar, 'verifier')).toBeUndefined();
  });

  it('is empty for an empty directory', async () => {
    const files = await directoryFiles(await tarOf([{ type: 'directory', name: 'verifier', mode: 0o755 }]), 'verifier');
    expect(files?.size).toBe(0);
  });
});

describe('installBundleOf', () => {
  it('writes each entry as ab-launch --install-bundle reads it: type, mode, mtime, name, data', () => {
    const mtime = new Date('2026-01-02T03:04:05Z');
    const b = installBundleOf([
      { type: 'directory', name: 'tests', mode: 0o755 },
      { type: 'file', name: 'tests/test.sh', mode: 0o100755, content: Buffer.from('echo hi\n'), mtime },
      { type: 'symlink', name: 'tests/link', linkname: '../x' },
    ]);
    expect(b.subarray(0, 4).toString()).toBe('ABB1');
    let at = 4;
    const next = () => {
      const type = String.fromCharCode(b[at] ?? 0);
      const mode = b.readUInt32BE(at + 1);
      const when = b.readBigInt64BE(at + 5);
      const nameLen = b.readUInt32BE(at + 13);
      const name = b.subarray(at + 17, at + 17 + nameLen).toString();
      const dataLen = b.readUInt32BE(at + 17 + nameLen);
      const data = b.subarray(at + 21 + nameLen, at + 21 + nameLen + dataLen).toString();
      at += 21 + nameLen + dataLen;
      return { type, mode, when, name, data };
    };
    expect(next()).toEqual({ type: 'd', mode: 0o755, when: -1n, name: 'tests', data: '' });
    expect(next()).toEqual({ type: 'f', mode: 0o755, when: BigInt(mtime.getTime() / 1000), name: 'tests/test.sh', data: 'echo hi\n' });
    expect(next()).toEqual({ type: 'l', mode: 0o777, when: -1n, name: 'tests/link', data: '../x' });
    expect(at).toBe(b.length);
  });

  it('refuses a name that leaves /', () => {
    expect(() => installBundleOf([{ type: 'directory', name: '../etc', mode: 0o755 }])).toThrow(/below \//);
  });
});
