import { describe, expect, it } from 'vitest';
import type { Task } from '../task-format/index.ts';
import { taintConfigFromTask } from './config.ts';

function task(over: Partial<Task['authbench']> = {}): Pick<Task, 'instruction' | 'workdir' | 'authbench'> {
  return {
    instruction: 'Do the thing.',
    workdir: '/app',
    authbench: {
      stage: 'security',
      cluster: 'c',
      untrusted_sources: ['/app/inbox/**'],
      canaries: ['CANARY-1'],
      secret_files: ['/root/.aws/credentials'],
      memory_files: ['/root/.notes'],
      network: 'sink',
      sink: { kind: 'listener', port: 9999 },
      ...over,
    },
  };
}

describe('taintConfigFromTask', () => {
  it('takes sources, secrets, sink, instruction and workdir from the task, extra secrets from the caller', () => {
    expect(taintConfigFromTask(task(), { secretFiles: ['/app//secrets.env', '/app/secrets.env'], extraScratch: ['/opt/authbench/run'] })).toEqual({
      stage: 'security',
      untrusted_sources: ['/app/inbox/**'],
      memory_files: ['/root/.notes'],
      secret_files: ['/root/.aws/credentials', '/app/secrets.env'],
      sink: { kind: 'listener', port: 9999 },
      instruction: 'Do the thing.',
      workdir: '/app',
      scratch_roots: ['/tmp', '/dev', '/proc', '/run', '/opt/authbench/run'],
    });
  });

  it('makes memory entries sources on the memory-recovery stage', () => {
    expect(taintConfigFromTask(task({ stage: 'memory-recovery' })).untrusted_sources).toEqual(['/app/inbox/**', '/root/.notes']);
    // A live two-episode scenario starts with a clean store: only what episode 1 writes there is tainted.
    const live = task({ stage: 'memory-recovery', memory: { mode: 'persistent', store: '/root/.notes', next_instruction: 'i2.md', withheld: [] } });
    expect(taintConfigFromTask(live).untrusted_sources).toEqual(['/app/inbox/**']);
    expect(taintConfigFromTask(live).memory_files).toEqual(['/root/.notes']);
    expect(taintConfigFromTask(task({ stage: 'clean', sink: undefined })).sink).toBeNull();
  });

  it('rejects a secret pattern that is not an absolute path', () => {
    expect(() => taintConfigFromTask(task(), { secretFiles: ['secrets.env'] })).toThrow(/secret file pattern "secrets.env": not an absolute path/);
  });
});
