/**
 * The attack path's containers read off a task's environment/ (task-format/environment.ts).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { attackPathGap, taskAttackPathGap } from './environment.ts';
import type { Task } from './load.ts';

describe('attackPathGap', () => {
  const dockerfile = 'FROM base\nCOPY tools/run.sh /workdir/tools/run.sh\nCOPY ./config /etc/app\nCOPY --from=builder /out /opt/out\n';
  const dirs = [
    { name: 'tools', dockerfile: false },
    { name: 'config', dockerfile: false },
  ];

  it('names a folder neither the image nor a compose service uses, with or without its Dockerfile', () => {
    expect(attackPathGap({ dirs: [...dirs, { name: 'leak_sink', dockerfile: true }], dockerfile, compose: undefined })).toBe(
      'attack path incomplete: environment/leak_sink/ is in neither the task image nor a compose service',
    );
    expect(attackPathGap({ dirs: [...dirs, { name: 'leak_sink', dockerfile: false }], dockerfile, compose: undefined })).toBe(
      'attack path incomplete: environment/leak_sink/ (no Dockerfile in this copy) is in neither the task image nor a compose service',
    );
    expect(attackPathGap({ dirs, dockerfile, compose: undefined })).toBeUndefined();
  });

  it('a compose service building the folder covers it and is started; one without its Dockerfile is not', () => {
    const long = 'services:\n  main: {}\n  mock:\n    build:\n      context: ./metadata_mock\n';
    const short = 'services:\n  sink:\n    build: leak_sink\n';
    const withMock = [...dirs, { name: 'metadata_mock', dockerfile: true }];
    expect(attackPathGap({ dirs: withMock, dockerfile, compose: long })).toBeUndefined();
    expect(attackPathGap({ dirs: [...dirs, { name: 'leak_sink', dockerfile: true }], dockerfile, compose: short })).toBeUndefined();
    expect(attackPathGap({ dirs: [...dirs, { name: 'leak_sink', dockerfile: false }], dockerfile, compose: short })).toBe(
      'attack path incomplete: compose service sink (environment/leak_sink/) cannot be built: no Dockerfile in this copy',
    );
    // A compose file naming another folder leaves this one orphaned.
    expect(attackPathGap({ dirs: [...withMock, { name: 'metadata', dockerfile: true }], dockerfile, compose: long })).toContain('environment/metadata/ is in neither');
    // A compose file authbench cannot use says so.
    expect(attackPathGap({ dirs: withMock, dockerfile, compose: long + '    ports: ["80:80"]\n' })).toMatch(/cannot be used \(services\.mock\.ports: compose key not supported/);
  });

  it('a Dockerfile copying the whole context (or a glob at its top) uses every folder', () => {
    const all = [...dirs, { name: 'leak_sink', dockerfile: true }];
    expect(attackPathGap({ dirs: all, dockerfile: 'FROM base\nCOPY . /app\n', compose: undefined })).toBeUndefined();
    expect(attackPathGap({ dirs: all, dockerfile: 'FROM base\nCOPY * /app/\n', compose: undefined })).toBeUndefined();
  });
});

describe('taskAttackPathGap', () => {
  it('reads the task folder: a folder the image never copies, until a compose file builds it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'environment-test-'));
    try {
      await mkdir(join(dir, 'leak_sink'));
      await writeFile(join(dir, 'leak_sink', 'upload_sink.py'), 'pass\n');
      await mkdir(join(dir, 'tools'));
      await writeFile(join(dir, 'Dockerfile'), 'FROM x\nCOPY tools/ /app/tools/\nRUN <<EOF\ncp -r leak_sink /x\nEOF\n');
      const task = { files: { contextDir: dir, dockerfile: join(dir, 'Dockerfile') } as Task['files'] };
      expect(await taskAttackPathGap(task)).toBe('attack path incomplete: environment/leak_sink/ (no Dockerfile in this copy) is in neither the task image nor a compose service');
      await writeFile(join(dir, 'docker-compose.yaml'), 'services:\n  leak-sink:\n    build:\n      context: ./leak_sink\n');
      expect(await taskAttackPathGap(task)).toBe('attack path incomplete: compose service leak-sink (environment/leak_sink/) cannot be built: no Dockerfile in this copy');
      await writeFile(join(dir, 'leak_sink', 'Dockerfile'), 'FROM x\n');
      expect(await taskAttackPathGap(task)).toBeUndefined();
      await rm(join(dir, 'leak_sink', 'Dockerfile'));
      await rm(join(dir, 'docker-compose.yaml'));
      await writeFile(join(dir, 'Dockerfile'), 'FROM x\nCOPY tools/ /app/tools/\nCOPY leak_sink/upload_sink.py /opt/\n');
      expect(await taskAttackPathGap(task)).toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
