import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { dockerMessage, isMissingPath } from './api-error.ts';
import { debootstrapArgv, mirrorFromAptSources, mountsUnder, recipeHash, BASE_RECIPE } from './base-images.ts';
import { imageTag, readBuildStream } from './build.ts';
import { isOwnedContainer, isOwnedImage, labelFilters, removalOrder } from './clean.ts';
import { CappedBuffer, Demuxer } from './demux.ts';
import { parseDockerHost } from './engine.ts';
import { execArgv, isTimeout } from './exec.ts';
import { LineSplitter, Tail } from './lines.ts';

function frame(type: number, text: string): Buffer {
  const payload = Buffer.from(text);
  const header = Buffer.alloc(8);
  header.writeUInt8(type, 0);
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

describe('Demuxer', () => {
  it('splits frames cut at arbitrary byte boundaries', () => {
    const stream = Buffer.concat([frame(1, 'out1 '), frame(2, 'err'), frame(1, 'out2'), frame(0, 'stdin-echo')]);
    for (const cut of [1, 3, 8, 9, 13, 20, stream.length]) {
      const got = { stdout: '', stderr: '' };
      const d = new Demuxer((kind, p) => (got[kind] += p.toString()));
      for (let i = 0; i < stream.length; i += cut) d.push(stream.subarray(i, i + cut));
      expect(got).toEqual({ stdout: 'out1 out2', stderr: 'err' });
      expect(d.pendingBytes).toBe(0);
    }
  });

  it('CappedBuffer keeps the first cap bytes and flags truncation', () => {
    const b = new CappedBuffer(5);
    b.push(Buffer.from('abc'));
    expect(b.truncated).toBe(false);
    b.push(Buffer.from('defg'));
    b.push(Buffer.from('h'));
    expect([b.toString(), b.truncated]).toEqual(['abcde', true]);
  });
});

describe('LineSplitter / Tail', () => {
  it('carries partial lines over', () => {
    const s = new LineSplitter();
    expect(s.push('a\nb')).toEqual(['a']);
    expect(s.push('c\r\nd\n\n')).toEqual(['bc', 'd', '']);
    expect(s.push('tail')).toEqual([]);
    expect(s.flush()).toEqual(['tail']);
    expect(s.flush()).toEqual([]);
  });

  it('Tail keeps the last n', () => {
    const t = new Tail<number>(2);
    [1, 2, 3].forEach((n) => t.push(n));
    expect(t.values()).toEqual([2, 3]);
  });
});

describe('exec helpers', () => {
  it('wraps a timed command in coreutils timeout, argv intact', () => {
    expect(execArgv(['echo', 'a b'], undefined)).toEqual(['echo', 'a b']);
    expect(execArgv(['-weird', 'x'], 1500)).toEqual(['timeout', '-s', 'KILL', '--', '1.5', '-weird', 'x']);
    expect(execArgv(['x'], 0.2)).toEqual(['timeout', '-s', 'KILL', '--', '0.001', 'x']);
    expect(() => execArgv(['x'], 0)).toThrow(/positive/);
  });

  it('attributes a KILL exit to the timeout only once the timeout could have fired', () => {
    expect(isTimeout(137, 1000, 1000)).toBe(true);
    expect(isTimeout(137, 999, 1000)).toBe(false);
    expect(isTimeout(1, 5000, 1000)).toBe(false);
    expect(isTimeout(137, 5000, undefined)).toBe(false);
  });
});

describe('parseDockerHost', () => {
  it.each([
    [undefined, 'unix:///var/run/docker.sock', { socketPath: '/var/run/docker.sock' }],
    ['unix:///run/user/1000/docker.sock', 'unix:///run/user/1000/docker.sock', { socketPath: '/run/user/1000/docker.sock' }],
    ['/tmp/d.sock', 'unix:///tmp/d.sock', { socketPath: '/tmp/d.sock' }],
    ['tcp://10.0.0.2:2375', 'tcp://10.0.0.2:2375', { protocol: 'http', host: '10.0.0.2', port: 2375 }],
    ['ssh://me@build-1', 'ssh://me@build-1', { protocol: 'ssh', host: 'build-1', port: 22, username: 'me' }],
    ['ssh://build-1:2222', 'ssh://build-1:2222', { protocol: 'ssh', host: 'build-1', port: 2222 }],
  ])('%s', (value, endpoint, options) => {
    expect(parseDockerHost(value, {})).toEqual({ endpoint, options });
  });

  it('speaks TLS as the docker CLI does: https, port 2376, or DOCKER_TLS_VERIFY; certificates from DOCKER_CERT_PATH or ~/.docker', () => {
    expect(parseDockerHost('https://dockerhost', { HOME: '/home/u' })).toEqual({ endpoint: 'https://dockerhost', options: { protocol: 'https', host: 'dockerhost', port: 2376 }, tlsCertPath: '/home/u/.docker' });
    expect(parseDockerHost('tcp://h:2376', { DOCKER_CERT_PATH: '/certs' })).toMatchObject({ options: { protocol: 'https', port: 2376 }, tlsCertPath: '/certs' });
    expect(parseDockerHost('tcp://h:9999', { DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: '/certs' })).toMatchObject({ options: { protocol: 'https', port: 9999 }, tlsCertPath: '/certs' });
    expect(parseDockerHost('tcp://h', { DOCKER_CERT_PATH: '/certs' })).toEqual({ endpoint: 'tcp://h', options: { protocol: 'http', host: 'h', port: 2375 } });
  });

  it('passes the ssh agent on', () => {
    expect(parseDockerHost('ssh://h', { SSH_AUTH_SOCK: '/run/agent.sock' }).options).toMatchObject({ protocol: 'ssh', sshOptions: { agent: '/run/agent.sock' } });
  });

  it('rejects what it cannot connect to, naming the value', () => {
    expect(() => parseDockerHost('npipe:////./pipe/docker', {})).toThrow(/unsupported Docker endpoint: npipe/);
    expect(() => parseDockerHost('unix://relative.sock', {})).toThrow(/unsupported Docker endpoint/);
    expect(() => parseDockerHost('tcp://user@h:1', {})).toThrow(/unsupported Docker endpoint/);
  });
});

describe('docker-modem errors', () => {
  const err = (statusCode: number, message: string): Error => Object.assign(new Error(message), { statusCode });
  it('strips the misleading per-endpoint label and recognises missing paths', () => {
    const missing = err(404, '(HTTP code 404) no such container - Could not find the file /nope in container abc ');
    expect(dockerMessage(missing)).toBe('Could not find the file /nope in container abc');
    expect(isMissingPath(missing)).toBe(true);
    expect(isMissingPath(err(404, '(HTTP code 404) no such container - No such container: abc'))).toBe(false);
  });
});

describe('readBuildStream', () => {
  const events = (...objs: object[]): string => objs.map((o) => JSON.stringify(o)).join('\r\n');

  it('forwards whole log lines and finds the error event of a failing RUN', async () => {
    const text = events(
      { stream: 'Step 1/2 : FROM x\n' },
      { stream: 'partial ' },
      { stream: 'line\nnext\n' },
      { errorDetail: { message: 'returned a non-zero code: 1' }, error: 'returned a non-zero code: 1' },
    );
    // Cut the JSON stream mid-event and mid multi-byte character.
    const bytes = Buffer.from(text.replace('partial', 'parti✓al'));
    const chunks = [bytes.subarray(0, 7), bytes.subarray(7, 40), bytes.subarray(40, 61), bytes.subarray(61)];
    const lines: string[] = [];
    const outcome = await readBuildStream(Readable.from(chunks), (l) => lines.push(l));
    expect(lines).toEqual(['Step 1/2 : FROM x', 'parti✓al line', 'next', 'returned a non-zero code: 1']);
    expect(outcome.error).toBe('returned a non-zero code: 1');
    expect(outcome.tail.at(-1)).toBe('returned a non-zero code: 1');
  });

  it('reports no error for a clean stream', async () => {
    const outcome = await readBuildStream(Readable.from([Buffer.from(events({ stream: 'ok\n' }, { aux: { ID: 'sha256:x' } }))]));
    expect(outcome).toEqual({ error: undefined, tail: ['ok'] });
  });

  it('imageTag uses the first 16 hex of the hash', () => {
    expect(imageTag('authbench/task-x', 'a'.repeat(64))).toBe(`authbench/task-x:${'a'.repeat(16)}`);
  });
});

describe('base images', () => {
  it('reads the mirror from deb822 first, then one-line sources', () => {
    const deb822 = 'Types: deb\n# URIs: http://commented.example/debian\nURIs: http://mirror.example/debian http://second.example\nSuites: bookworm\n';
    expect(mirrorFromAptSources({ debianSources: deb822, sourcesList: 'deb http://other.example/debian bookworm main' })).toBe(
      'http://mirror.example/debian',
    );
    expect(mirrorFromAptSources({ sourcesList: '# x\ndeb-src http://src.example b main\ndeb [arch=amd64] http://one.example/debian bookworm main' })).toBe(
      'http://one.example/debian',
    );
    expect(mirrorFromAptSources({})).toBeUndefined();
  });

  it('debootstrap argv and a recipe hash that tracks the package list', () => {
    expect(debootstrapArgv('/r', 'http://m')).toEqual([
      '--variant=minbase',
      '--include=python3,python3-pytest,strace,ca-certificates,procps',
      'bookworm',
      '/r',
      'http://m',
    ]);
    expect(recipeHash()).toBe(recipeHash());
    expect(recipeHash({ ...BASE_RECIPE, include: ['python3'] })).not.toBe(recipeHash());
  });

  it('finds leftover mounts under the rootfs, deepest first', () => {
    const info = [
      '22 1 0:21 / /proc rw - proc proc rw',
      '90 30 0:5 / /tmp/rootfs-x/proc rw - proc proc rw',
      '91 30 0:6 / /tmp/rootfs-x/dev/pts rw - devpts devpts rw',
      '92 30 0:7 / /tmp/rootfs-xy rw - tmpfs tmpfs rw',
      '93 30 0:8 / /tmp/rootfs-x/with\\040space rw - tmpfs tmpfs rw',
    ].join('\n');
    expect(mountsUnder(info, '/tmp/rootfs-x')).toEqual(['/tmp/rootfs-x/with space', '/tmp/rootfs-x/dev/pts', '/tmp/rootfs-x/proc']);
  });
});

describe('clean ownership', () => {
  const hash = 'f'.repeat(64);
  it('owns containers started by authbench, not ones that inherited image labels', () => {
    expect(isOwnedContainer({ 'authbench.managed': 'true', 'authbench.kind': 'container' })).toBe(true);
    expect(isOwnedContainer({ 'authbench.managed': 'true', 'authbench.kind': 'base-image' })).toBe(false);
    expect(isOwnedContainer({})).toBe(false);
  });

  it('owns imported base images and hash-tagged builds, not images built on top of them by others', () => {
    const base = { 'authbench.managed': 'true', 'authbench.kind': 'base-image', 'authbench.content-hash': hash };
    expect(isOwnedImage({ labels: base, repoTags: ['authbench/base:bookworm'], layers: 1 })).toBe(true);
    expect(isOwnedImage({ labels: base, repoTags: ['someone/derived:latest'], layers: 3 })).toBe(false);
    const task = { ...base, 'authbench.kind': 'task-image' };
    expect(isOwnedImage({ labels: task, repoTags: [`authbench/task-x:${hash.slice(0, 16)}`], layers: 4 })).toBe(true);
    expect(isOwnedImage({ labels: task, repoTags: ['someone/derived:latest'], layers: 5 })).toBe(false);
    expect(isOwnedImage({ labels: {}, repoTags: [], layers: 1 })).toBe(false);
  });

  it('removes task images before base images; filters always include managed', () => {
    expect(removalOrder([{ kind: 'base-image' }, { kind: 'task-image' }]).map((i) => i.kind)).toEqual(['task-image', 'base-image']);
    expect(labelFilters({ 'authbench.run': 'r1' })).toEqual(['authbench.managed=true', 'authbench.run=r1']);
  });
});
