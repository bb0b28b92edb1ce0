/**
 * A dockerd of a test's (or the bench's) own, next to the main one (as daemon-restart.test.ts starts it): its own
 * socket, data root, exec root, pidfile and config, all under one temp folder, and its own
 * network namespace — a dockerd sees and manages `docker0` in the namespace it runs in, so in a
 * namespace of its own its bridge never touches the main daemon's. Without a bridge
 * (`bridge: false`) no build with a RUN step works there; with one, builds and containers do
 * (no iptables: nothing leaves the namespace anyway). `remove()` unmounts and deletes it all.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectDocker } from '../../docker/index.ts';

export const DOCKERD = ['/usr/sbin/dockerd', '/usr/bin/dockerd'].find((p) => existsSync(p));
export const UNSHARE = ['/usr/bin/unshare', '/bin/unshare'].find((p) => existsSync(p));
/** Root, dockerd and unshare: what starting a second daemon needs (else the test skips, saying so). */
export const CAN_START_DAEMON = DOCKERD !== undefined && UNSHARE !== undefined && process.getuid?.() === 0;

export class SecondDaemon {
  readonly dir: string;
  readonly socket: string;
  private readonly bridge: boolean;
  private process: ChildProcess | undefined;
  log = '';

  constructor(options: { bridge: boolean }) {
    this.bridge = options.bridge;
    // Short: the socket path must fit in sun_path (108 bytes).
    this.dir = mkdtempSync(join(tmpdir(), 'ab-dd-'));
    this.socket = join(this.dir, 'docker.sock');
    // An empty config of its own: the host's /etc/docker/daemon.json (hosts, mirrors) is the main daemon's.
    writeFileSync(join(this.dir, 'daemon.json'), '{}\n');
  }

  get host(): string {
    return `unix://${this.socket}`;
  }

  async start(): Promise<void> {
    const child = spawn(
      UNSHARE ?? 'unshare',
      [
        '--net',
        '--',
        DOCKERD ?? 'dockerd',
        `--host=${this.host}`,
        `--config-file=${join(this.dir, 'daemon.json')}`,
        `--data-root=${join(this.dir, 'data')}`,
        `--exec-root=${join(this.dir, 'exec')}`,
        `--pidfile=${join(this.dir, 'docker.pid')}`,
        ...(this.bridge ? [] : ['--bridge=none']),
        '--iptables=false',
        '--ip-masq=false',
        '--shutdown-timeout=2',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const keep = (c: Buffer): void => {
      this.log = (this.log + c.toString('utf8')).slice(-20_000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.process = child;
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (await connectDocker({ host: this.host }).then(() => true, () => false)) return;
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the second dockerd did not answer on ${this.host}:\n${this.log.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 300));
    }
  }

  /** SIGTERM and wait: dockerd stops its containers and its containerd; SIGKILL only if it hangs. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.process;
    this.process = undefined;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    await exited;
    clearTimeout(timer);
  }

  /** After stop: nothing of it may stay mounted (its netns and overlay mounts), then its folders go. */
  remove(): void {
    const mounts = readFileSync('/proc/self/mounts', 'utf8')
      .split('\n')
      .map((l) => l.split(' ')[1] ?? '')
      .filter((m) => m.startsWith(`${this.dir}/`))
      .sort((a, b) => b.length - a.length);
    for (const m of mounts) spawnSync('umount', ['-l', m]);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
