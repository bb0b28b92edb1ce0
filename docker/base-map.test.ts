import { describe, expect, it } from 'vitest';
import {
  BaseMapFileSchema,
  externalImageRefs,
  matchBaseMap,
  normalizeImageRef,
  parseBaseMapFlag,
  substituteBaseImages,
} from './base-map.ts';
import type { BaseMapEntry, SubstitutionOptions } from './base-map.ts';

const BASE = 'authbench/base:bookworm';
const DEFAULT_ENTRIES: BaseMapEntry[] = [
  { pattern: 'ubuntu:*', image: BASE },
  { pattern: 'debian:*', image: BASE },
  { pattern: 'python:3*', image: BASE },
];
const nothingLocal = (): boolean => false;

function sub(dockerfile: string, options: Partial<SubstitutionOptions> = {}) {
  return substituteBaseImages(dockerfile, { entries: DEFAULT_ENTRIES, mode: 'auto', isLocal: nothingLocal, ...options });
}

describe('substituteBaseImages', () => {
  const cases: { name: string; input: string; buildArgs?: Record<string, string>; output: string; subs: string[] }[] = [
    {
      name: 'plain image',
      input: 'FROM python:3.12-slim\nRUN true',
      output: `FROM ${BASE}\nRUN true`,
      subs: ['python:3.12-slim'],
    },
    {
      name: 'lower-case keyword and stage alias kept',
      input: 'from ubuntu:24.04 as Build\nRUN make',
      output: `FROM ${BASE} AS Build\nRUN make`,
      subs: ['ubuntu:24.04'],
    },
    {
      name: '${ARG} with a default declared before FROM',
      input: 'ARG BASE_IMAGE=python:3.11-slim\nFROM ${BASE_IMAGE}\nWORKDIR /app',
      output: `ARG BASE_IMAGE=python:3.11-slim\nFROM ${BASE}\nWORKDIR /app`,
      subs: ['python:3.11-slim'],
    },
    {
      name: '$ARG without braces, quoted default',
      input: 'ARG IMG="debian:bookworm-slim"\nFROM $IMG',
      output: `ARG IMG="debian:bookworm-slim"\nFROM ${BASE}`,
      subs: ['debian:bookworm-slim'],
    },
    {
      name: 'a build arg wins over the default',
      input: 'ARG IMG=python:3.11\nFROM ${IMG}',
      buildArgs: { IMG: 'ubuntu:22.04' },
      output: `ARG IMG=python:3.11\nFROM ${BASE}`,
      subs: ['ubuntu:22.04'],
    },
    {
      name: 'a build arg can steer FROM to an unmapped image',
      input: 'ARG IMG=python:3.11\nFROM ${IMG}',
      buildArgs: { IMG: 'alpine:3' },
      output: 'ARG IMG=python:3.11\nFROM ${IMG}',
      subs: [],
    },
    {
      name: '${ARG:-default} form',
      input: 'ARG TAG\nFROM python:${TAG:-3.10}',
      output: `ARG TAG\nFROM ${BASE}`,
      subs: ['python:3.10'],
    },
    {
      name: 'multi-stage: earlier alias and scratch untouched',
      input: 'FROM python:3.12 AS builder\nRUN build\nFROM builder AS test\nFROM scratch\nCOPY --from=builder /out /out',
      output: `FROM ${BASE} AS builder\nRUN build\nFROM builder AS test\nFROM scratch\nCOPY --from=builder /out /out`,
      subs: ['python:3.12'],
    },
    {
      name: 'stage alias match is case-insensitive',
      input: 'FROM ubuntu:24.04 AS Base\nFROM base',
      output: `FROM ${BASE} AS Base\nFROM base`,
      subs: ['ubuntu:24.04'],
    },
    {
      name: 'unmapped image untouched',
      input: 'FROM node:20\nRUN npm i',
      output: 'FROM node:20\nRUN npm i',
      subs: [],
    },
    {
      name: '--platform flag kept',
      input: 'FROM --platform=linux/amd64 ubuntu:24.04 AS x',
      output: `FROM --platform=linux/amd64 ${BASE} AS x`,
      subs: ['ubuntu:24.04'],
    },
    {
      name: 'line continuation replaced, line count kept',
      input: 'FROM \\\n  python:3.12 \\\n  AS app\nRUN true',
      output: `FROM ${BASE} AS app\n\n\nRUN true`,
      subs: ['python:3.12'],
    },
    {
      name: 'ARG after the first FROM does not apply to later FROMs',
      input: 'FROM python:3.12\nARG LATER=ubuntu:24.04\nFROM ${LATER}',
      output: `FROM ${BASE}\nARG LATER=ubuntu:24.04\nFROM \${LATER}`,
      subs: ['python:3.12'],
    },
    {
      name: 'comments and parser directives ignored',
      input: '# syntax=docker/dockerfile:1\n# FROM python:3.12\nFROM debian:12',
      output: `# syntax=docker/dockerfile:1\n# FROM python:3.12\nFROM ${BASE}`,
      subs: ['debian:12'],
    },
    {
      name: 'a FROM line in a heredoc body is file content, not an instruction',
      input: 'FROM node:20\nRUN <<EOF cat > /srv/Dockerfile\nFROM python:3.12\nEOF\nFROM ubuntu:24.04',
      output: `FROM node:20\nRUN <<EOF cat > /srv/Dockerfile\nFROM python:3.12\nEOF\nFROM ${BASE}`,
      subs: ['ubuntu:24.04'],
    },
    {
      name: 'comment and blank lines inside a FROM continuation blanked with it',
      input: 'FROM \\\n# the base\n\n  python:3.12\nRUN true',
      output: `FROM ${BASE}\n\n\n\nRUN true`,
      subs: ['python:3.12'],
    },
    {
      name: 'docker.io/library prefix matches',
      input: 'FROM docker.io/library/python:3.9',
      output: `FROM ${BASE}`,
      subs: ['docker.io/library/python:3.9'],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const r = sub(c.input, c.buildArgs === undefined ? {} : { buildArgs: c.buildArgs });
      expect(r.text).toBe(c.output);
      expect(r.substitutions.map((s) => s.from)).toEqual(c.subs);
    });
  }

  it('auto mode leaves images that exist locally alone', () => {
    const r = sub('FROM python:3.12-slim\nFROM ubuntu:24.04', { isLocal: (ref) => ref === 'python:3.12-slim' });
    expect(r.text).toBe(`FROM python:3.12-slim\nFROM ${BASE}`);
    expect(r.baseImages).toEqual([
      { ref: 'python:3.12-slim', substitutedFrom: undefined },
      { ref: BASE, substitutedFrom: 'ubuntu:24.04' },
    ]);
  });

  it('always mode substitutes even local images; never mode substitutes nothing', () => {
    const local = (): boolean => true;
    expect(sub('FROM python:3.12', { mode: 'always', isLocal: local }).text).toBe(`FROM ${BASE}`);
    expect(sub('FROM python:3.12', { mode: 'never' }).text).toBe('FROM python:3.12');
  });

  it('first matching entry wins (extra entries go first)', () => {
    const r = sub('FROM python:3.12', { entries: [{ pattern: 'python:*', image: 'mine:1' }, ...DEFAULT_ENTRIES] });
    expect(r.substitutions).toEqual([{ from: 'python:3.12', to: 'mine:1' }]);
  });

  it('lists each base image once', () => {
    const r = sub('FROM python:3.12 AS a\nFROM ubuntu:24.04 AS b\nFROM node:20');
    expect(r.baseImages.map((b) => b.ref)).toEqual([BASE, 'node:20']);
  });
});

describe('externalImageRefs', () => {
  it('expands ARG defaults that reference earlier ARGs', () => {
    expect(externalImageRefs('ARG V=3.12\nARG IMG=python:${V}\nFROM $IMG')).toEqual(['python:3.12']);
  });

  it('leaves out stages, scratch, unresolved references and FROM lines in heredoc bodies', () => {
    const text = 'FROM a:1 AS one\nFROM one\nFROM scratch\nFROM ${NOPE}\nRUN <<EOF cat > /inner.Dockerfile\nFROM b:2\nEOF\nFROM a:1';
    expect(externalImageRefs(text)).toEqual(['a:1']);
  });
});

describe('helpers', () => {
  it('normalizeImageRef', () => {
    expect(normalizeImageRef('docker.io/library/python:3')).toBe('python:3');
    expect(normalizeImageRef('ubuntu')).toBe('ubuntu:latest');
    expect(normalizeImageRef('localhost:5000/x')).toBe('localhost:5000/x:latest');
    expect(normalizeImageRef('python@sha256:abc')).toBe('python@sha256:abc');
  });

  it('matchBaseMap matches untagged references through :latest', () => {
    expect(matchBaseMap(DEFAULT_ENTRIES, 'ubuntu')?.image).toBe(BASE);
    expect(matchBaseMap(DEFAULT_ENTRIES, 'python:2.7')).toBeUndefined();
  });

  it('parseBaseMapFlag', () => {
    expect(parseBaseMapFlag('node:*=authbench/base:bookworm')).toEqual({ pattern: 'node:*', image: BASE });
    expect(parseBaseMapFlag('node:*')).toBeUndefined();
    expect(parseBaseMapFlag('=x')).toBeUndefined();
    expect(parseBaseMapFlag('x=')).toBeUndefined();
  });

  it('the bundled map file is valid and maps the documented images', async () => {
    const { readFile } = await import('node:fs/promises');
    const file = BaseMapFileSchema.parse(JSON.parse(await readFile(new URL('./base-map.json', import.meta.url), 'utf8')));
    expect(file.entries.map((e) => e.pattern)).toEqual([
      'ubuntu:*',
      'debian:*',
      'python:3.13*',
      'python:3.11*',
      'python:3*',
      '**/t-bench/ubuntu-*',
      '**/t-bench/python-3-13:*',
      '**/t-bench/python-3-11:*',
      '**/t-bench/python-*',
    ]);
    const image = (ref: string): string | undefined => matchBaseMap(file.entries, ref)?.image;
    expect(image('python:3.13-slim-bookworm')).toBe('authbench/base:python3.13-trixie');
    expect(image('python:3.11-slim')).toBe('authbench/base:python3.11-bookworm');
    expect(image('python:3.12-slim')).toBe('authbench/base:bookworm');
    expect(image('ghcr.io/laude-institute/t-bench/ubuntu-24-04:20250624')).toBe('authbench/base:bookworm');
    expect(image('ghcr.io/laude-institute/t-bench/python-3-13:20250620')).toBe('authbench/base:python3.13-trixie');
    expect(BaseMapFileSchema.safeParse({ entries: [{ pattern: 'x' }] }).success).toBe(false);
  });
});
