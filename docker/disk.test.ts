/** Where engineDiskFree reads free space (a local engine's data root), and where it does not. */
import type Dockerode from 'dockerode';
import { describe, expect, it } from 'vitest';
import { engineDiskFree } from './disk.ts';
import { DockerEngine } from './engine.ts';

describe('engineDiskFree', () => {
  it("an engine over TCP is not this host's to measure: undefined, without asking it", async () => {
    let asked = false;
    const docker = { info: () => ((asked = true), Promise.resolve({ DockerRootDir: '/' })) } as unknown as Dockerode;
    expect(await engineDiskFree(new DockerEngine(docker, 'tcp://10.0.0.9:2376'))).toBeUndefined();
    expect(asked).toBe(false);
  });

  it('a local engine whose data root this host cannot see (a VM): undefined', async () => {
    const docker = { info: () => Promise.resolve({ DockerRootDir: '/var/lib/docker-inside-a-vm-that-is-not-here' }) } as unknown as Dockerode;
    expect(await engineDiskFree(new DockerEngine(docker, 'unix:///var/run/docker.sock'))).toBeUndefined();
  });

  it('a local engine: the data root and what statfs leaves a writer there', async () => {
    const docker = { info: () => Promise.resolve({ DockerRootDir: '/' }) } as unknown as Dockerode;
    const disk = await engineDiskFree(new DockerEngine(docker, 'unix:///var/run/docker.sock'));
    expect(disk?.root).toBe('/');
    expect(disk?.freeBytes).toBeGreaterThan(0);
  });
});
