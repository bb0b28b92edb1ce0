import { spawnSync } from 'node:child_process';
import type Dockerode from 'dockerode';
import { describe, expect, it } from 'vitest';
import { DockerEngine } from './engine.ts';
import { currentOwner, lookupProcess, ownerLabels, ownerState, parseProcStat, type ProcessInfo, type ProcessOwner } from './owner.ts';
import { LABELS } from './types.ts';

const owner: ProcessOwner = { runId: 'run-1', pid: 4242, startTime: '987654', bootId: 'boot-a', host: 'box' };
const self = { host: 'box', bootId: 'boot-a' };
const table = (procs: Record<number, ProcessInfo>) => (pid: number): ProcessInfo | undefined => procs[pid];

describe('ownerState', () => {
  const labels = ownerLabels(owner);

  it('is alive while the same process (pid and start time) runs', () => {
    expect(ownerState(labels, self, table({ 4242: { state: 'S', startTime: '987654' } }))).toBe('alive');
  });

  it('is gone when the pid is free, recycled by a later process, or a zombie', () => {
    expect(ownerState(labels, self, table({}))).toBe('gone');
    expect(ownerState(labels, self, table({ 4242: { state: 'S', startTime: '999999' } }))).toBe('gone');
    expect(ownerState(labels, self, table({ 4242: { state: 'Z', startTime: '987654' } }))).toBe('gone');
  });

  it('is gone after a reboot whatever runs under that pid now', () => {
    expect(ownerState(labels, { host: 'box', bootId: 'boot-b' }, table({ 4242: { state: 'S', startTime: '987654' } }))).toBe('gone');
  });

  it('cannot be checked from another host, or without a start time', () => {
    expect(ownerState(labels, { host: 'other', bootId: 'boot-a' }, table({}))).toBe('unknown');
    expect(ownerState(ownerLabels({ ...owner, startTime: undefined }), self, table({}))).toBe('unknown');
    expect(ownerState({ ...labels, [LABELS.ownerPid]: 'x' }, self, table({}))).toBe('unknown');
  });

  it('is unowned without owner labels (containers from before owners were recorded)', () => {
    expect(ownerState({ [LABELS.managed]: 'true', [LABELS.run]: 'job-a' }, self, table({}))).toBe('unowned');
  });
});

describe('parseProcStat', () => {
  it('counts fields after the last parenthesis, so a command name with spaces and parentheses is fine', () => {
    const rest = Array.from({ length: 50 }, (_, i) => String(i + 4)).join(' ');
    // Field 3 is the state, field 22 the start time.
    expect(parseProcStat(`123 (a) b (c) S ${rest}`)).toEqual({ state: 'S', startTime: '22' });
    expect(parseProcStat('garbage')).toBeUndefined();
    expect(parseProcStat('1 (x) R 2 3')).toBeUndefined();
  });

  it('reads this process from /proc, and a finished child is not found or not the same process', () => {
    const me = lookupProcess(process.pid);
    expect(me?.startTime).toMatch(/^\d+$/);
    expect(currentOwner().startTime).toBe(me?.startTime);
    const child = spawnSync('true');
    const later = lookupProcess(child.pid ?? -1);
    expect(later === undefined || later.startTime !== me?.startTime).toBe(true);
  });
});

describe('DockerEngine labels', () => {
  async function labelsOf(specLabels: Record<string, string>): Promise<Record<string, string>> {
    let seen: Record<string, string> = {};
    const docker = {
      createContainer: (opts: { Labels: Record<string, string> }) => {
        seen = opts.Labels;
        return Promise.resolve({ start: () => Promise.resolve(), remove: () => Promise.resolve() });
      },
    } as unknown as Dockerode;
    await new DockerEngine(docker, 'fake', owner).startContainer({ image: 'i', labels: specLabels });
    return seen;
  }

  it("stamps the owner on every container, under the caller's run id when it gives one", async () => {
    expect(await labelsOf({ [LABELS.task]: 't' })).toMatchObject({ [LABELS.task]: 't', [LABELS.run]: 'run-1', [LABELS.ownerPid]: '4242', [LABELS.ownerStart]: '987654', [LABELS.ownerBoot]: 'boot-a', [LABELS.ownerHost]: 'box', [LABELS.kind]: 'container' });
    expect((await labelsOf({ [LABELS.run]: 'job-x' }))[LABELS.run]).toBe('job-x');
  });

  it('does not let a caller name another owner', async () => {
    expect((await labelsOf({ [LABELS.ownerPid]: '1' }))[LABELS.ownerPid]).toBe('4242');
  });
});
