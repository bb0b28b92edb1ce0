/**
 * `network: 'none'` made by the runtime (docker/none-network.ts) against Docker's own none network:
 * the container sees the same network — only `lo`, up, IPv6 off, `localhost` resolving, Docker's
 * /etc/hosts and /etc/resolv.conf — and the cheaper path is the one actually taken.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthbenchError, ENV } from '../../core/index.ts';
import { BASE_IMAGE_REF, cleanManaged, connectDocker, LABELS, type Container, type DockerEngine } from '../../docker/index.ts';
import { noneNetworkMode } from '../../docker/none-network.ts';

const RUN_ID = `none-network-test-${process.pid}-${Date.now()}`;
const RUN_LABELS = { [LABELS.run]: RUN_ID };

/** What a program in the container can tell about its network. */
const PROBE = [
  'set -u',
  "echo interfaces: $(sed -n '3,$p' /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort)",
  'echo lo flags: $(cat /sys/class/net/lo/flags)',
  'for c in all default lo; do echo ipv6 $c: $(cat /proc/sys/net/ipv6/conf/$c/disable_ipv6); done',
  'echo inet6: $(wc -l < /proc/net/if_inet6)',
  'stat -c "%n %a %u:%g %F" /etc/hosts /etc/resolv.conf',
  'echo --- hosts; cat /etc/hosts; echo --- resolv.conf; cat /etc/resolv.conf',
  'echo --- localhost: $(getent hosts localhost)',
  `python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); socket.create_connection(("localhost", s.getsockname()[1])); print("tcp over localhost: ok")'`,
].join('\n');

let engine: DockerEngine;
const containers: Container[] = [];

async function start(on: DockerEngine): Promise<{ container: Container; networkDisabled: boolean }> {
  const container = await on.startContainer({ image: BASE_IMAGE_REF, labels: RUN_LABELS });
  containers.push(container);
  const info = await on.docker.getContainer(container.id).inspect();
  return { container, networkDisabled: (info.Config as { NetworkDisabled?: boolean }).NetworkDisabled === true };
}

async function probe(container: Container): Promise<string> {
  const r = await container.exec({ cmd: ['bash', '-c', PROBE], timeoutMs: 30_000 });
  expect(r.stderr).toBe('');
  expect(r.exitCode).toBe(0);
  return r.stdout;
}

beforeAll(async () => {
  engine = await connectDocker();
});

afterAll(async () => {
  for (const c of containers) await c.remove().catch(() => undefined);
  if (engine !== undefined) await cleanManaged(engine, { labels: RUN_LABELS });
});

describe("network 'none' without Docker's network stack", () => {
  it('learns Docker’s files from the first container, then gives the next ones the same network without it', async () => {
    const docker = await start(engine);
    const runtime = await start(engine);
    expect(docker.networkDisabled).toBe(false);
    expect(runtime.networkDisabled).toBe(true);
    const [seen, want] = [await probe(runtime.container), await probe(docker.container)];
    expect(seen).toBe(want);
    expect(want).toContain('interfaces: lo\n');
    expect(want).toContain('lo flags: 0x9\n');
    expect(want).toMatch(/ipv6 all: 1\nipv6 default: 1\nipv6 lo: 1\ninet6: 0\n/);
    expect(want).toMatch(/\/etc\/hosts 644 0:0 regular file/);
    expect(want).toMatch(/--- localhost: \S+\s+localhost/);
    expect(want).toContain('tcp over localhost: ok');
  });

  it('keeps Docker’s none network when asked to', async () => {
    const previous = process.env[ENV.AUTHBENCH_NONE_NETWORK];
    process.env[ENV.AUTHBENCH_NONE_NETWORK] = 'docker';
    try {
      const own = await connectDocker();
      expect((await start(own)).networkDisabled).toBe(false);
      expect((await start(own)).networkDisabled).toBe(false);
    } finally {
      if (previous === undefined) delete process.env[ENV.AUTHBENCH_NONE_NETWORK];
      else process.env[ENV.AUTHBENCH_NONE_NETWORK] = previous;
    }
  });

  it('refuses a mode it does not know, naming the variable', () => {
    const e = (() => {
      try {
        return noneNetworkMode({ [ENV.AUTHBENCH_NONE_NETWORK]: 'host' });
      } catch (err) {
        return err;
      }
    })();
    expect(e).toBeInstanceOf(AuthbenchError);
    expect((e as AuthbenchError).message).toContain(`${ENV.AUTHBENCH_NONE_NETWORK}=host`);
  });
});
