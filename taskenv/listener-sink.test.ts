import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Container, ExecOptions, ExecResult } from '../docker/index.ts';
import type { Task } from '../task-format/index.ts';
import { LISTENER_RECORDER_PROGRAM, listenerRecordPath, listenerSinkArgv, startListenerSink } from './listener-sink.ts';

const listener = { kind: 'listener' as const, port: 8765, path: '/var/lib/upload-service/received.log' };

function fakeContainer(result: Partial<ExecResult>): { container: Container; calls: ExecOptions[] } {
  const calls: ExecOptions[] = [];
  const container = {
    id: 'fake',
    exec: (o: ExecOptions) => {
      calls.push(o);
      return Promise.resolve({ exitCode: 0, timedOut: false, stdout: '', stderr: '', stdoutTruncated: false, stderrTruncated: false, durationMs: 1, ...result });
    },
  } as unknown as Container;
  return { container, calls };
}

const task = (sink: unknown): Pick<Task, 'id' | 'authbench'> => ({ id: 't', authbench: { sink } as unknown as Task['authbench'] });

describe('listenerSinkArgv', () => {
  it('starts the recorder in the background with port, record, ready file and cap as arguments, never spliced into the script', () => {
    const argv = listenerSinkArgv(listener);
    expect(argv.slice(0, 2)).toEqual(['sh', '-c']);
    expect(argv[3]).toBe(LISTENER_RECORDER_PROGRAM);
    expect(argv.slice(4)).toEqual(['8765', listener.path, '/run/authbench-sink-8765.ready', String(1024 * 1024)]);
    expect(argv[2]).not.toContain('8765');
    expect(LISTENER_RECORDER_PROGRAM).toContain('srv.bind(("127.0.0.1", port))');
  });

  it('a listener without a path records outside the workdir, by port', () => {
    expect(listenerRecordPath({ kind: 'listener', port: 9000 })).toBe('/var/lib/authbench-sink/9000.received');
  });
});

describe('startListenerSink', () => {
  it('does nothing for a task without a listener sink', async () => {
    for (const sink of [undefined, { kind: 'dir', path: '/srv/outbox' }]) {
      const { container, calls } = fakeContainer({});
      await startListenerSink(container, task(sink));
      expect(calls).toEqual([]);
    }
  });

  it('runs the start-up exec with a timeout and returns when it reports the listener ready', async () => {
    const { container, calls } = fakeContainer({});
    await startListenerSink(container, task(listener));
    expect(calls).toHaveLength(1);
    expect(calls[0]?.cmd).toEqual(listenerSinkArgv(listener));
    expect(calls[0]?.timeoutMs).toBeGreaterThan(0);
  });

  it('an image without python3 is the task’s fault; anything else is the harness’s', async () => {
    await expect(startListenerSink(fakeContainer({ exitCode: 127, stderr: 'python3 not found in the image' }).container, task(listener))).rejects.toMatchObject({
      code: 'INVALID_TASK',
      field: 'authbench.sink',
    });
    await expect(startListenerSink(fakeContainer({ exitCode: 1, stderr: 'the recorder did not start listening' }).container, task(listener))).rejects.toMatchObject({
      code: 'INTERNAL',
      details: ['the recorder did not start listening'],
    });
  });
});

const hasPython = spawnSync('python3', ['--version']).status === 0;

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

async function send(port: number, data: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(data));
    socket.once('close', () => resolve());
    socket.once('error', reject);
  });
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe.skipIf(!hasPython)('the recorder program (python3 on this machine)', () => {
  it('records what each connection sends, appended, up to the cap', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'authbench-recorder-'));
    const port = await freePort();
    const record = join(dir, 'sink', 'received.log');
    const ready = join(dir, 'ready');
    const child = spawn('python3', ['-c', LISTENER_RECORDER_PROGRAM, String(port), record, ready, '40'], { stdio: 'ignore' });
    try {
      await until(() => Promise.resolve(existsSync(ready)), 'the recorder to listen');
      await send(port, 'first AUTHBENCH_CANARY_0\n');
      await until(async () => (await readFile(record, 'utf8')).length >= 25, 'the first connection to be recorded');
      await send(port, 'second connection, past the cap\n');
      await until(async () => (await readFile(record, 'utf8')).length >= 40, 'the second connection to be recorded');
      await send(port, 'third\n');
      // The cap is reached: nothing more is written, whatever arrives.
      await new Promise((r) => setTimeout(r, 200));
      expect(await readFile(record, 'utf8')).toBe('first AUTHBENCH_CANARY_0\nsecond connecti');
    } finally {
      child.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  });
});
