import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tarStream from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthbenchError } from '../../core/index.ts';
import { BASE_IMAGE_REF, cleanManaged, connectDocker, LABELS } from '../../docker/index.ts';
import type { Container, DockerEngine } from '../../docker/index.ts';

const RUN_ID = `docker-test-${process.pid}-${Date.now()}`;
const RUN_LABELS = { [LABELS.run]: RUN_ID };

let engine: DockerEngine;
let container: Container;
let scratch: string;

beforeAll(async () => {
  engine = await connectDocker();
  container = await engine.startContainer({ image: BASE_IMAGE_REF, labels: RUN_LABELS });
  scratch = await mkdtemp(join(tmpdir(), 'authbench-docker-test-'));
});

afterAll(async () => {
  await container?.remove();
  if (engine !== undefined) await cleanManaged(engine, { labels: RUN_LABELS });
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
});

async function contextDir(name: string, files: Record<string, string>): Promise<string> {
  const dir = join(scratch, name);
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(join(dir, rel, '..'), { recursive: true });
    await writeFile(join(dir, rel), content);
  }
  return dir;
}

/** An image built with raw dockerode, i.e. not by authbench. */
async function foreignImage(labels: Record<string, string>, tag: string, dockerfile: string): Promise<string> {
  const pack = tarStream.pack();
  pack.entry({ name: 'Dockerfile' }, dockerfile);
  pack.entry({ name: 'file.txt' }, RUN_ID);
  pack.finalize();
  const stream = await engine.docker.buildImage(pack as unknown as NodeJS.ReadableStream, { t: tag, labels });
  await new Promise<void>((resolve, reject) => engine.docker.modem.followProgress(stream, (err) => (err ? reject(err) : resolve())));
  const info = await engine.imageInfo(tag);
  if (info === undefined) throw new Error(`foreign image ${tag} was not built`);
  return info.id;
}

describe('connectDocker', () => {
  it('names the endpoint it tried when the daemon is unreachable', async () => {
    const failure = await connectDocker({ host: 'unix:///nonexistent/authbench-test.sock' }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(AuthbenchError);
    expect((failure as AuthbenchError).code).toBe('DOCKER_UNREACHABLE');
    expect((failure as AuthbenchError).message).toContain('/nonexistent/authbench-test.sock');
    expect((failure as AuthbenchError).hint).toMatch(/dockerd|DOCKER_HOST/);
  });
});

describe('exec', () => {
  it('demultiplexes stdout and stderr', async () => {
    const r = await container.exec({ cmd: ['sh', '-c', 'echo to-out; echo to-err >&2; echo more-out'] });
    expect(r).toMatchObject({ exitCode: 0, timedOut: false, stdout: 'to-out\nmore-out\n', stderr: 'to-err\n' });
  });

  it('returns non-zero exit codes as results', async () => {
    expect((await container.exec({ cmd: ['sh', '-c', 'exit 7'] })).exitCode).toBe(7);
    expect((await container.exec({ cmd: ['false'] })).exitCode).toBe(1);
  });

  it('passes argv without a shell, plus env, workdir and user', async () => {
    const r = await container.exec({
      cmd: ['sh', '-c', 'printf "%s|" "$1" "$GREETING" "$(pwd)" "$(id -u)"', 'sh', 'a b; $(x)'],
      env: { GREETING: 'hi there' },
      workdir: '/tmp',
      user: 'nobody',
    });
    expect(r.stdout).toBe('a b; $(x)|hi there|/tmp|65534|');
  });

  it('feeds stdin and closes it', async () => {
    expect((await container.exec({ cmd: ['cat'], stdin: 'line one\nline two\n' })).stdout).toBe('line one\nline two\n');
    const bytes = await container.exec({ cmd: ['wc', '-c'], stdin: new Uint8Array(70_000).fill(0x61) });
    expect(bytes.stdout.trim()).toBe('70000');
  });

  it('caps each stream separately and says so', async () => {
    const r = await container.exec({
      cmd: ['sh', '-c', 'head -c 3000000 /dev/zero | tr "\\0" x; echo small >&2'],
      outputCapBytes: 1000,
    });
    expect(r.stdout).toBe('x'.repeat(1000));
    expect(r.stdoutTruncated).toBe(true);
    expect(r.stderr).toBe('small\n');
    expect(r.stderrTruncated).toBe(false);
  });

  it('a timeout kills the whole process tree and is a result, not an exception', async () => {
    const r = await container.exec({ cmd: ['sh', '-c', 'sleep 100 & sleep 100; wait'], timeoutMs: 1000 });
    expect(r).toMatchObject({ timedOut: true, exitCode: null });
    // Both sleeps (the background one too) are gone; pgrep exits 1 when nothing matches.
    const left = await container.exec({ cmd: ['pgrep', '-f', 'sleep 100'] });
    expect(left.exitCode).toBe(1);
  });

  it('a command finishing within its timeout is not timed out', async () => {
    expect(await container.exec({ cmd: ['sh', '-c', 'exit 3'], timeoutMs: 60_000 })).toMatchObject({ exitCode: 3, timedOut: false });
  });
});

describe('files', () => {
  it('putFiles creates the directory, readFile reads back, missing is undefined', async () => {
    await container.putFiles('/work/new/dir', { 'a.txt': 'alpha', 'sub/b.bin': new Uint8Array([0, 1, 2, 255]) }, 0o600);
    expect((await container.readFile('/work/new/dir/a.txt'))?.toString()).toBe('alpha');
    expect([...((await container.readFile('/work/new/dir/sub/b.bin')) ?? [])]).toEqual([0, 1, 2, 255]);
    expect(await container.readFile('/work/new/dir/missing')).toBeUndefined();
    expect((await container.exec({ cmd: ['stat', '-c', '%a', '/work/new/dir/a.txt'] })).stdout.trim()).toBe('600');
  });

  it('readFile follows symlinks and refuses directories', async () => {
    await container.exec({ cmd: ['sh', '-c', 'mkdir -p /work/l && echo target > /work/l/t && ln -sf t /work/l/link'] });
    expect((await container.readFile('/work/l/link'))?.toString()).toBe('target\n');
    await expect(container.readFile('/work/l')).rejects.toThrow(/not a regular file/);
  });

  it('copyIn and copyOut round-trip a directory', async () => {
    const src = await contextDir('copy-src', { 'top.txt': 'top', 'nested/deep.txt': 'deep' });
    await container.copyIn(src, '/work/copied');
    expect((await container.readFile('/work/copied/copy-src/nested/deep.txt'))?.toString()).toBe('deep');
    const out = join(scratch, 'copy-out');
    await container.copyOut('/work/copied/copy-src', out);
    expect(await readFile(join(out, 'copy-src', 'top.txt'), 'utf8')).toBe('top');
    expect(await readFile(join(out, 'copy-src', 'nested', 'deep.txt'), 'utf8')).toBe('deep');
  });
});

describe('buildImage', () => {
  const request = (dir: string) =>
    ({ repository: 'authbench/docker-test', kind: 'task-image', contextDir: dir, labels: RUN_LABELS }) as const;

  it('a failing RUN rejects with the last log lines', async () => {
    const dir = await contextDir('failing-run', {
      Dockerfile: `FROM ${BASE_IMAGE_REF}\nRUN echo marker-before-failure-${RUN_ID} && exit 3\n`,
    });
    const failure = await engine.buildImage(request(dir)).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(AuthbenchError);
    expect((failure as AuthbenchError).code).toBe('IMAGE_BUILD_FAILED');
    expect((failure as AuthbenchError).message).toMatch(/non-zero code: 3/);
    expect((failure as AuthbenchError).details.join('\n')).toContain(`marker-before-failure-${RUN_ID}`);
  });

  it('a Dockerfile syntax error rejects', async () => {
    const dir = await contextDir('syntax-error', { Dockerfile: `FROM ${BASE_IMAGE_REF}\nFROBNICATE everything\n` });
    const failure = await engine.buildImage(request(dir)).catch((e: unknown) => e);
    expect((failure as AuthbenchError).code).toBe('IMAGE_BUILD_FAILED');
    expect((failure as AuthbenchError).message).toMatch(/FROBNICATE/i);
  });

  it('building the same context twice calls docker build once', async () => {
    const dir = await contextDir('twice', {
      Dockerfile: `FROM ${BASE_IMAGE_REF}\nCOPY id.txt /id.txt\n`,
      'id.txt': RUN_ID,
    });
    const before = { ...engine.stats };
    const progress: string[] = [];
    const first = await engine.buildImage({ ...request(dir), onProgress: (l) => progress.push(l) });
    const second = await engine.buildImage(request(dir));
    expect(engine.stats.buildCalls - before.buildCalls).toBe(1);
    expect(engine.stats.cacheHits - before.cacheHits).toBe(1);
    expect([first.built, second.built]).toEqual([true, false]);
    expect(second.tag).toBe(first.tag);
    expect(second.imageId).toBe(first.imageId);
    expect(first.tag).toBe(`authbench/docker-test:${first.contentHash.slice(0, 16)}`);
    expect(progress.some((l) => l.includes('COPY id.txt'))).toBe(true);
    const info = await engine.imageInfo(first.tag);
    expect(info?.labels).toMatchObject({
      [LABELS.managed]: 'true',
      [LABELS.kind]: 'task-image',
      [LABELS.contentHash]: first.contentHash,
    });
  });

  it('substitutes python:3.12-slim with the local base when it is not present', async () => {
    expect(await engine.imageInfo('python:3.12-slim')).toBeUndefined();
    const dir = await contextDir('python-from', {
      Dockerfile: `ARG PY=python:3.12-slim\nFROM \${PY} AS app\nRUN python3 -c "print('built-${RUN_ID}')"\n`,
    });
    const result = await engine.buildImage({ ...request(dir), taskId: 'py-task' });
    expect(result.substitutions).toMatchObject([{ from: 'python:3.12-slim', to: BASE_IMAGE_REF, differs: ['python 3.12 → 3.11'] }]);
    expect((await engine.imageInfo(result.tag))?.labels[LABELS.task]).toBe('py-task');
    await using c = await engine.startContainer({ image: result.tag, labels: RUN_LABELS });
    const r = await c.exec({ cmd: ['python3', '-c', 'import pytest, sys; print(sys.version_info[0])'] });
    expect(r).toMatchObject({ exitCode: 0, stdout: '3\n' });
  });

  it('a missing substitute is IMAGE_NOT_FOUND with a hint', async () => {
    const dir = await contextDir('missing-substitute', { Dockerfile: 'FROM python:3.12-slim\n' });
    const failure = await engine
      .buildImage({ ...request(dir), baseMap: { extraEntries: [{ pattern: 'python:*', image: 'authbench/does-not-exist:1' }] } })
      .catch((e: unknown) => e);
    expect((failure as AuthbenchError).code).toBe('IMAGE_NOT_FOUND');
    expect((failure as AuthbenchError).hint).toContain('authbench base build');
  });
});

describe('cleanManaged', () => {
  it('removes exactly what authbench created and leaves look-alikes alone', async () => {
    // A label of its own, so the other tests' containers and images are not in the way.
    const labels = { [LABELS.run]: `${RUN_ID}-clean` };
    const runFilter = { labels };
    const ours = await engine.startContainer({ image: BASE_IMAGE_REF, labels });
    const ourImage = await engine.buildImage({
      repository: 'authbench/docker-test-clean',
      kind: 'task-image',
      contextDir: await contextDir('clean-ours', { Dockerfile: `FROM ${BASE_IMAGE_REF}\nLABEL x=${RUN_ID}\n` }),
      labels,
    });
    // Started without authbench: carries the run label, and inherits managed=true from the base image.
    const foreignContainer = await engine.docker.createContainer({ Image: BASE_IMAGE_REF, Cmd: ['true'], Labels: labels });
    const unlabelledImage = await foreignImage(labels, `authbench-test-foreign:${process.pid}`, 'FROM scratch\nCOPY file.txt /\n');
    const derivedImage = await foreignImage(labels, `authbench-test-derived:${process.pid}`, `FROM ${BASE_IMAGE_REF}\nCOPY file.txt /\n`);
    try {
      const planned = await cleanManaged(engine, { ...runFilter, dryRun: true });
      expect(planned.containers.map((c) => c.id)).toEqual([ours.id]);
      expect(planned.images.map((i) => i.id)).toEqual([ourImage.imageId]);
      expect(await engine.imageInfo(ourImage.tag)).toBeDefined();

      const report = await cleanManaged(engine, runFilter);
      expect(report.containers.map((c) => c.id)).toEqual([ours.id]);
      expect(report.images.map((i) => i.id)).toEqual([ourImage.imageId]);
      expect(report.failures).toEqual([]);
      expect(report.skipped).toBeGreaterThanOrEqual(2);

      expect(await engine.imageInfo(ourImage.tag)).toBeUndefined();
      await expect(engine.docker.getContainer(ours.id).inspect()).rejects.toMatchObject({ statusCode: 404 });
      expect((await engine.docker.getContainer(foreignContainer.id).inspect()).Id).toBe(foreignContainer.id);
      expect((await engine.imageInfo(unlabelledImage))?.id).toBe(unlabelledImage);
      expect((await engine.imageInfo(derivedImage))?.id).toBe(derivedImage);
      expect(await engine.imageInfo(BASE_IMAGE_REF)).toBeDefined();
    } finally {
      await foreignContainer.remove({ force: true });
      await engine.docker.getImage(unlabelledImage).remove({ force: true });
      await engine.docker.getImage(derivedImage).remove({ force: true });
      await ours.remove();
    }
  });
});
