import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isAuthbenchError } from '../../core/index.ts';
import { allowAllPolicy, denyAllPolicy } from './builtins.ts';
import { jsonErrorOffset } from './json-position.ts';
import { loadPolicyFile, MAX_POLICY_BYTES, parsePolicyText, policyOrThrow } from './parse.ts';
import { PolicySchema } from './schema.ts';

const F = 'authorization_policy.json';

describe('parsePolicyText: valid policies', () => {
  it('parses an AuthBench policy (three arrays) unchanged', () => {
    const text = JSON.stringify({ read: ['/app/in.txt', '/app/src/*.py'], write: ['/app/out/**'], execute: ['/usr/bin/python3'] });
    const r = parsePolicyText(text, F);
    expect(r).toEqual({ valid: true, policy: JSON.parse(text), problems: [] });
    expect(r.policy).not.toHaveProperty('network');
  });

  it('normalises entries', () => {
    const r = parsePolicyText('{"read":["/app/./x","\\\\app\\\\y"],"write":[],"execute":[]}', F);
    expect(r.policy?.read).toEqual(['/app/x', '/app/y']);
  });

  it('fills the network section defaults', () => {
    const r = parsePolicyText('{"read":[],"write":[],"execute":[],"network":{"tcp_connect":[{"host":"127.0.0.1","port":8080}]}}', F);
    expect(r.valid).toBe(true);
    expect(r.policy?.network).toEqual({ tcp_connect: [{ host: '127.0.0.1', port: 8080 }], tcp_bind: [], allow_all: false });
  });

  it('builtins are valid policies', () => {
    for (const p of [allowAllPolicy(), denyAllPolicy()]) {
      expect(parsePolicyText(JSON.stringify(p), F)).toEqual({ valid: true, policy: PolicySchema.parse(p), problems: [] });
    }
    expect(allowAllPolicy().network?.allow_all).toBe(true);
    expect(denyAllPolicy()).toEqual({ read: [], write: [], execute: [] });
  });
});

describe('parsePolicyText: diagnostics name the offending entry', () => {
  const cases: [string, string, RegExp, string?][] = [
    ['invalid JSON with position', '{"read": [}', /invalid JSON: .*position 10.*line 1 column 11/],
    ['invalid JSON on a later line', '{\n  "read": [],\n  "write": [,]\n}', /line 3/],
    ['unknown top-level key', '{"read":[],"write":[],"execute":[],"delete":[]}', /delete/],
    ['missing axis', '{"read":[],"write":[]}', /expected array/, 'execute'],
    ['non-string entry', '{"read":["/a", 3],"write":[],"execute":[]}', /expected string/, 'read.1'],
    ['relative path', '{"read":["app/x"],"write":[],"execute":[]}', /"app\/x": not an absolute path/, 'read[0]'],
    ['empty entry', '{"read":[""],"write":[],"execute":[]}', /empty path/, 'read[0]'],
    ['mid-path **', '{"read":[],"write":[],"execute":["/usr/**/bin"]}', /`\*\*` is only allowed/, 'execute[0]'],
    ['exact duplicate', '{"read":["/a","/a"],"write":[],"execute":[]}', /^read\[1\] "\/a" duplicates read\[0\] "\/a"$/, 'read[1]'],
    ['non-loopback host', '{"read":[],"write":[],"execute":[],"network":{"tcp_connect":[{"host":"10.0.0.1","port":80}]}}', /loopback/, 'network.tcp_connect.0.host'],
    ['port out of range', '{"read":[],"write":[],"execute":[],"network":{"tcp_bind":[70000]}}', /65535/, 'network.tcp_bind.0'],
    ['unknown network key', '{"read":[],"write":[],"execute":[],"network":{"udp":true}}', /udp/, 'network'],
    ['not an object', '[]', /expected object/],
  ];
  it.each(cases)('%s', (_name, text, message, field) => {
    const r = parsePolicyText(text, F);
    expect(r.valid).toBe(false);
    expect(r.policy).toBeUndefined();
    const hit = r.problems.find((p) => message.test(p.message));
    expect(hit, JSON.stringify(r.problems)).toBeDefined();
    expect(hit?.file).toBe(F);
    if (field !== undefined) expect(hit?.field).toBe(field);
  });

  it('reports a duplicate after normalisation with both spellings', () => {
    const r = parsePolicyText('{"read":[],"write":["/tmp/a","/app/out.txt","/tmp/b","/app//out.txt"],"execute":[]}', F);
    expect(r.problems.map((p) => p.message)).toEqual([
      'write[3] "/app//out.txt" duplicates write[1] "/app/out.txt" after normalisation',
    ]);
  });

  it('collects every problem, not just the first', () => {
    const r = parsePolicyText('{"read":["x","y"],"write":[],"execute":["/a/**/b"]}', F);
    expect(r.problems.map((p) => p.field)).toEqual(['read[0]', 'read[1]', 'execute[0]']);
  });
});

describe('loadPolicyFile', () => {
  it('reads a file, and throws INVALID_POLICY naming an unreadable one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'authbench-policy-'));
    try {
      const file = join(dir, F);
      await writeFile(file, '{"read":["rel"],"write":[],"execute":[]}');
      const r = await loadPolicyFile(file);
      expect(r.valid).toBe(false);
      expect(r.problems[0]?.file).toBe(file);
      expect(() => policyOrThrow(r, file)).toThrow(/not a valid authorization policy/);

      const missing = join(dir, 'nope.json');
      const err: unknown = await loadPolicyFile(missing).catch((e: unknown) => e);
      expect(isAuthbenchError(err) && err.code === 'INVALID_POLICY' && err.file === missing).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the policy size limit', () => {
  it('refuses policy text over MAX_POLICY_BYTES as invalid, naming the limit, and accepts it at the limit', () => {
    const padded = (bytes: number): string => {
      const head = '{"read":[],"write":[],"execute":[]';
      return `${head}${' '.repeat(bytes - head.length - 1)}}`;
    };
    expect(parsePolicyText(padded(MAX_POLICY_BYTES), F).valid).toBe(true);
    const over = parsePolicyText(padded(MAX_POLICY_BYTES + 1), F);
    expect(over.valid).toBe(false);
    expect(over.problems).toEqual([{ file: F, message: `the policy is ${MAX_POLICY_BYTES + 1} bytes, over the limit of 1048576 bytes (1 MiB)`, severity: 'error' }]);
    // Bytes, not characters: MAX_POLICY_BYTES characters, one of them two bytes long, is over.
    expect(parsePolicyText(`{"read":["/é"],"write":[],"execute":[]}${' '.repeat(MAX_POLICY_BYTES - 39)}`, F).valid).toBe(false);
  });

  it('refuses a file over the limit with TOO_LARGE before reading it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'authbench-policy-'));
    try {
      const file = join(dir, F);
      await writeFile(file, `{"read":[],"write":[],"execute":[]}${' '.repeat(MAX_POLICY_BYTES)}`);
      const err: unknown = await loadPolicyFile(file).catch((e: unknown) => e);
      expect(isAuthbenchError(err) && err.code).toBe('TOO_LARGE');
      expect(isAuthbenchError(err) && err.file).toBe(file);
      expect((err as Error).message).toContain('over the limit of 1048576 bytes (1 MiB)');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('jsonErrorOffset', () => {
  it.each([
    ['{"a": [}', 7],
    ['{"a": 1,}', 8],
    ['{"a" 1}', 5],
    ['{"a": tru}', 6],
    ['{"a": 1} x', 9],
    ['{"a": "x', 8],
    ['', 0],
    ['{"a": [1, 2.5e3, null, {"b": "\\"q"}]}', undefined],
  ])('%j -> %s', (text, want) => {
    expect(jsonErrorOffset(text)).toBe(want);
  });
});
