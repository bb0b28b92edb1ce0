/**
 * A container with no network (`network: 'none'`), made by the runtime rather than by Docker's
 * network stack. Docker's `none` network costs a container two helper processes of dockerd's
 * (the libnetwork-setkey prestart hook and set-ipv6) and a network sandbox to create and tear
 * down: about 155 ms of CPU per container on the 2-core machines, 40% of a container's
 * create+start+remove (`make bench`). With `NetworkDisabled` the runtime gives the container its
 * own network namespace with only `lo`, up, and Docker skips all of that — and also skips what a
 * task would notice: `/etc/hosts` (no `localhost`), `/etc/resolv.conf`, and IPv6 switched off.
 * So the engine puts those back as Docker makes them: the sysctls below, and the two files read
 * from the first container it started Docker's way (the daemon's own content, the host's
 * resolvers included), written into each new container before it starts. What stays different:
 * the two files are the container's own rather than bind mounts (a rename over them works).
 * `AUTHBENCH_NONE_NETWORK=docker` keeps Docker's way; engines other than Docker's always do.
 */
import { AuthbenchError, ENV, readEnv } from '../core/index.ts';
import { tarOfFiles } from './archive.ts';

/** What Docker's `none` network sets in the container's namespace (set-ipv6: IPv6 off everywhere). */
export const NONE_NETWORK_SYSCTLS: Readonly<Record<string, string>> = {
  'net.ipv6.conf.all.disable_ipv6': '1',
  'net.ipv6.conf.default.disable_ipv6': '1',
  'net.ipv6.conf.lo.disable_ipv6': '1',
};

/** The files Docker's network stack writes for a container; with NetworkDisabled, nothing does. */
export const NONE_NETWORK_FILES = ['/etc/hosts', '/etc/resolv.conf'] as const;
export type NoneNetworkFiles = Readonly<Record<(typeof NONE_NETWORK_FILES)[number], Buffer>>;

/** `runtime` (default): NetworkDisabled plus what Docker would add; `docker`: Docker's none network. */
export type NoneNetworkMode = 'runtime' | 'docker';

export function noneNetworkMode(env: NodeJS.ProcessEnv = process.env): NoneNetworkMode {
  const value = readEnv(ENV.AUTHBENCH_NONE_NETWORK, env);
  if (value === undefined || value === 'runtime') return 'runtime';
  if (value === 'docker') return 'docker';
  throw new AuthbenchError('INVALID_CONFIG', `${ENV.AUTHBENCH_NONE_NETWORK}=${value}: expected runtime or docker`);
}

/** The tar that puts the files in place, extracted at `/` (root-owned, 0644, as Docker's are). */
export function noneNetworkTar(files: NoneNetworkFiles): Promise<Buffer> {
  return tarOfFiles('', Object.fromEntries(NONE_NETWORK_FILES.map((path) => [path.slice(1), files[path]])), 0o644);
}
