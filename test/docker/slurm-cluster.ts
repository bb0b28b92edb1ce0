/**
 * A one-node Slurm cluster for tests, started from Debian's slurm-wlm and
 * munge with everything under one temporary folder (config, key, sockets,
 * state, logs) and free ports, so it never touches /etc or a cluster the
 * machine already runs. The daemons run in the foreground as children of
 * the test and stop with it. Needs root (SlurmUser=root, munged --force).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, hostname, tmpdir } from 'node:os';
import { join } from 'node:path';

const DAEMONS = ['munged', 'slurmctld', 'slurmd', 'sbatch', 'squeue', 'scancel', 'sinfo'] as const;

/** Why a cluster cannot start here, or undefined when it can. */
export function slurmUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root (slurmctld runs as SlurmUser=root here)';
  const missing = DAEMONS.filter((d) => spawnSync('sh', ['-c', `command -v ${d}`]).status !== 0);
  return missing.length === 0 ? undefined : `missing ${missing.join(', ')} (Debian: slurm-wlm, munge)`;
}

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface SlurmCluster {
  /** The environment a client (sbatch, authbench) needs: SLURM_CONF. */
  env: Record<string, string>;
  /** The daemons' logs, for a failing test's message. */
  logs: () => string;
  stop: () => Promise<void>;
}

export async function startSlurmCluster(): Promise<SlurmCluster> {
  const root = mkdtempSync(join(tmpdir(), 'authbench-slurm-cluster-'));
  for (const d of ['munge', 'state', 'spool', 'log']) mkdirSync(join(root, d));
  chmodSync(join(root, 'munge'), 0o711);
  const key = join(root, 'munge', 'key');
  writeFileSync(key, randomBytes(1024), { mode: 0o400 });
  const socket = join(root, 'munge', 'socket');
  const node = hostname().split('.')[0] ?? 'localhost';
  const [ctldPort, slurmdPort] = [await freePort(), await freePort()];
  const conf = join(root, 'slurm.conf');
  writeFileSync(
    conf,
    [
      'ClusterName=authbench-test',
      `SlurmctldHost=${node}`,
      'SlurmUser=root',
      'SlurmdUser=root',
      'AuthType=auth/munge',
      `AuthInfo=socket=${socket}`,
      'CredType=cred/munge',
      'ProctrackType=proctrack/linuxproc',
      'TaskPlugin=task/none',
      'SchedulerType=sched/builtin',
      'SelectType=select/cons_tres',
      'SelectTypeParameters=CR_Core',
      `StateSaveLocation=${join(root, 'state')}`,
      `SlurmdSpoolDir=${join(root, 'spool')}`,
      `SlurmctldPidFile=${join(root, 'slurmctld.pid')}`,
      `SlurmdPidFile=${join(root, 'slurmd.pid')}`,
      `SlurmctldPort=${ctldPort}`,
      `SlurmdPort=${slurmdPort}`,
      `SlurmctldLogFile=${join(root, 'log', 'slurmctld.log')}`,
      `SlurmdLogFile=${join(root, 'log', 'slurmd.log')}`,
      'ReturnToService=2',
      'MpiDefault=none',
      'JobCompType=jobcomp/none',
      'AccountingStorageType=accounting_storage/none',
      `NodeName=${node} CPUs=${cpus().length} State=UNKNOWN`,
      'PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES',
      '',
    ].join('\n'),
  );
  const env = { SLURM_CONF: conf };
  const children: ChildProcess[] = [];
  const start = (cmd: string, args: string[]): void => {
    children.push(spawn(cmd, args, { env: { ...process.env, ...env }, stdio: 'ignore' }));
  };
  const stop = async (): Promise<void> => {
    for (const c of children.reverse()) {
      if (c.exitCode !== null || c.signalCode !== null) continue;
      const gone = new Promise((resolve) => c.once('exit', resolve));
      c.kill('SIGTERM');
      await Promise.race([gone, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    }
    rmSync(root, { recursive: true, force: true });
  };
  const logs = (): string =>
    ['munged.log', 'slurmctld.log', 'slurmd.log']
      .map((f) => join(root, 'log', f))
      .filter((f) => existsSync(f))
      .map((f) => `== ${f}\n${readFileSync(f, 'utf8').split('\n').slice(-30).join('\n')}`)
      .join('\n');

  start('munged', ['--foreground', '--force', `--socket=${socket}`, `--key-file=${key}`, `--log-file=${join(root, 'log', 'munged.log')}`, `--pid-file=${join(root, 'munge', 'pid')}`, `--seed-file=${join(root, 'munge', 'seed')}`]);
  for (let i = 0; i < 100 && !existsSync(socket); i++) await new Promise((r) => setTimeout(r, 50));
  start('slurmctld', ['-D', '-i']);
  start('slurmd', ['-D']);
  // Ready when the node is idle: sinfo answers from slurmctld, which has heard from slurmd.
  for (let i = 0; i < 150; i++) {
    const r = spawnSync('sinfo', ['-h', '-N', '-o', '%T'], { env: { ...process.env, ...env }, encoding: 'utf8' });
    if (r.status === 0 && r.stdout.trim() === 'idle') return { env, logs, stop };
    await new Promise((r) => setTimeout(r, 200));
  }
  const why = logs();
  await stop();
  throw new Error(`the test Slurm cluster did not become ready in 30 s\n${why}`);
}
