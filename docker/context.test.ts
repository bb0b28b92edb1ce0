import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import * as tarStream from 'tar-stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  contentHash,
  contextDigests,
  dockerfileRelPath,
  isExcluded,
  packContext,
  parseDockerignore,
  readBuildContext,
} from './context.ts';
import type { BuildContext } from './context.ts';

describe('.dockerignore semantics', () => {
  const cases: { rules: string; path: string; excluded: boolean }[] = [
    { rules: '*.pyc', path: 'a.pyc', excluded: true },
    // Docker anchors patterns at the root, unlike .gitignore.
    { rules: '*.pyc', path: 'pkg/a.pyc', excluded: false },
    { rules: '**/*.pyc', path: 'pkg/sub/a.pyc', excluded: true },
    { rules: 'build', path: 'build/out/x.o', excluded: true },
    { rules: '/build/', path: 'build/x', excluded: true },
    { rules: './secrets', path: 'secrets/key', excluded: true },
    { rules: 'docs/*.md', path: 'docs/a.md', excluded: true },
    { rules: 'docs/*.md', path: 'docs/sub/a.md', excluded: false },
    // Last match wins, and `!` re-includes even inside an excluded directory.
    { rules: 'data\n!data/keep.txt', path: 'data/keep.txt', excluded: false },
    { rules: 'data\n!data/keep.txt', path: 'data/drop.txt', excluded: true },
    { rules: '*.md\n!README.md', path: 'README.md', excluded: false },
    { rules: '!README.md\n*.md', path: 'README.md', excluded: true },
    { rules: '# comment\n\n  tmp  ', path: 'tmp', excluded: true },
    { rules: 'ca?e', path: 'cave', excluded: true },
    { rules: '[ab].txt', path: 'c.txt', excluded: false },
  ];
  for (const c of cases) {
    it(`${JSON.stringify(c.rules)} → ${c.path} ${c.excluded ? 'excluded' : 'kept'}`, () => {
      expect(isExcluded(parseDockerignore(c.rules), c.path)).toBe(c.excluded);
    });
  }

  it('dockerfileRelPath refuses paths outside the context', () => {
    expect(dockerfileRelPath(undefined)).toBe('Dockerfile');
    expect(dockerfileRelPath('docker/../Dockerfile.dev')).toBe('Dockerfile.dev');
    expect(() => dockerfileRelPath('../Dockerfile')).toThrow(/inside the build context/);
  });
});

describe('build context and content hash', () => {
  let dir: string;
  const write = async (rel: string, content: string): Promise<void> => {
    await mkdir(dirname(join(dir, rel)), { recursive: true });
    await writeFile(join(dir, rel), content);
  };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'authbench-ctx-'));
    await write('Dockerfile', 'FROM python:3.12\nCOPY . /app\n');
    await write('.dockerignore', '*.log\ncache\n!cache/keep.txt\n.dockerignore\nDockerfile\n');
    await write('app/main.py', 'print("hi")\n');
    await write('app/util.py', 'X = 1\n');
    await write('debug.log', 'noise\n');
    await write('cache/big.bin', 'ignored\n');
    await write('cache/keep.txt', 'kept\n');
    await symlink('app/main.py', join(dir, 'entry.py'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const hashOf = async (ctx?: BuildContext, dockerfileText?: string): Promise<string> => {
    const c = ctx ?? (await readBuildContext(dir));
    return contentHash({
      files: await contextDigests(c),
      dockerfile: { path: c.dockerfile.path, text: dockerfileText ?? c.dockerfile.text },
      buildArgs: {},
      baseImageIds: ['sha256:base'],
      labels: {},
    });
  };

  it('lists what Docker would send; .dockerignore itself is always sent, the Dockerfile separately', async () => {
    const ctx = await readBuildContext(dir);
    expect(ctx.entries.map((e) => `${e.type[0]} ${e.path}`)).toEqual([
      'f .dockerignore',
      'd app',
      'f app/main.py',
      'f app/util.py',
      'd cache',
      'f cache/keep.txt',
      's entry.py',
    ]);
    expect(ctx.dockerfile.path).toBe('Dockerfile');
  });

  it('is stable across reads', async () => {
    expect(await hashOf()).toBe(await hashOf());
  });

  it('changes when one byte of one sent file changes', async () => {
    const before = await hashOf();
    await write('app/util.py', 'X = 2\n');
    expect(await hashOf()).not.toBe(before);
  });

  it('does not change when an ignored file changes or appears', async () => {
    const before = await hashOf();
    await write('debug.log', 'other noise\n');
    await write('cache/big.bin', 'changed\n');
    await write('cache/new.bin', 'new\n');
    expect(await hashOf()).toBe(before);
  });

  it('changes with a file mode, a symlink target, the Dockerfile text, args and base ids', async () => {
    const ctx = await readBuildContext(dir);
    const files = await contextDigests(ctx);
    const base = { files, dockerfile: { path: 'Dockerfile', text: 'FROM a' }, buildArgs: {}, baseImageIds: ['sha256:1'], labels: {} };
    const h = contentHash(base);
    expect(contentHash({ ...base, dockerfile: { path: 'Dockerfile', text: 'FROM b' } })).not.toBe(h);
    expect(contentHash({ ...base, buildArgs: { A: '1' } })).not.toBe(h);
    expect(contentHash({ ...base, baseImageIds: ['sha256:2'] })).not.toBe(h);
    expect(contentHash({ ...base, files: [...files].reverse() })).toBe(h);

    await chmod(join(dir, 'app/main.py'), 0o755);
    expect(await hashOf()).not.toBe(await hashOf(ctx));
    await rm(join(dir, 'entry.py'));
    await symlink('app/util.py', join(dir, 'entry.py'));
    const relinked = await readBuildContext(dir);
    expect((await contextDigests(relinked)).find((f) => f.path === 'entry.py')?.digest).toBe('link:app/util.py');
  });

  it('packs exactly the listed entries plus the effective Dockerfile', async () => {
    const ctx = await readBuildContext(dir);
    const entries = new Map<string, string>();
    const extract = tarStream.extract();
    extract.on('entry', (header, body, next) => {
      const chunks: Buffer[] = [];
      body.on('data', (c) => {
        chunks.push(c as Buffer);
      });
      body.on('end', () => {
        entries.set(header.name, Buffer.concat(chunks).toString());
        next();
      });
    });
    const done = new Promise<void>((resolve, reject) => {
      extract.on('finish', () => resolve());
      extract.on('error', reject);
    });
    packContext(ctx, 'FROM substituted\n').pipe(extract);
    await done;
    const names = [...entries.keys()].filter((n) => n !== '.' && n !== './').sort();
    expect(names).toEqual(['.dockerignore', 'Dockerfile', 'app', 'app/main.py', 'app/util.py', 'cache', 'cache/keep.txt', 'entry.py']);
    expect(entries.get('Dockerfile')).toBe('FROM substituted\n');
    expect(entries.get('cache/keep.txt')).toBe('kept\n');
  });
});
