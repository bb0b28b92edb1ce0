/**
 * Take a candidate snapshot of a task image: list the scored roots (and the
 * directories above them, for symlink resolution) in a throwaway container.
 * The only part of scoring that needs Docker; everything after is pure.
 */
import { posix } from 'node:path';
import { AuthbenchError } from '../core/index.ts';
import type { Container, Engine } from '../docker/index.ts';
import { LABELS } from '../docker/index.ts';
import { parseSnapshot, snapshotCommand } from '../sandbox/paths/index.ts';
import type { FsSnapshot } from '../sandbox/paths/index.ts';
import { buildCandidateSnapshot, foldRoots, snapshotRoots } from './candidates.ts';
import type { CandidateSnapshot } from './candidates.ts';
import type { AxisPatterns } from './reference.ts';

/** Listings of /usr/bin-sized trees run to a few MB; the exec default cap (1 MiB) is too small. */
const LISTING_CAP_BYTES = 256 * 1024 * 1024;
const LISTING_TIMEOUT_MS = 120_000;

/**
 * argv listing the directories above the roots one level deep: that is where
 * merged-/usr links such as `/bin` → `usr/bin` live, and a link can only be
 * resolved when every directory on its target path is listed too.
 */
export function ancestorListingCommand(roots: readonly string[]): string[] {
  const above = new Set<string>(['/']);
  for (const root of roots) for (let d = posix.dirname(root); d !== '/'; d = posix.dirname(d)) above.add(d);
  const argv = snapshotCommand([...above].sort());
  const options = argv.indexOf('-xdev');
  if (options < 0) throw new AuthbenchError('INTERNAL', 'snapshotCommand no longer has -xdev; cannot insert -maxdepth');
  return [...argv.slice(0, options), '-maxdepth', '1', ...argv.slice(options)];
}

/** find's complaint about a root that does not exist in this image (we run it with LC_ALL=C). */
const MISSING_ROOT = /^find: '(.+)': No such file or directory$/;

/**
 * List `roots` completely plus their ancestors' entries, inside a running
 * container. find does not follow a root that is a symlink (merged-/usr
 * `/bin`), so the roots' realpaths are listed as well.
 */
export async function snapshotContainer(container: Container, roots: readonly string[]): Promise<FsSnapshot> {
  const real = await container.exec({ cmd: ['realpath', '-m', '--', ...roots], env: { LC_ALL: 'C' }, timeoutMs: LISTING_TIMEOUT_MS });
  if (real.exitCode !== 0) {
    throw new AuthbenchError('TRACE_UNREADABLE', `cannot resolve the scored roots in image ${container.image}`, {
      details: [`exit code ${String(real.exitCode)}`, ...real.stderr.split('\n').slice(-5)],
      hint: 'the image needs GNU coreutils realpath',
    });
  }
  const resolved = real.stdout.split('\n').filter((l) => l.startsWith('/'));
  const all = foldRoots([...roots, ...resolved]);
  const ancestors = await list(container, ancestorListingCommand(all), 'root ancestors');
  const listing = await list(container, snapshotCommand(all), 'scored roots');
  // Ancestors first: the complete listing of the roots then wins for paths both contain.
  return parseSnapshot(ancestors + listing, all);
}

async function list(container: Container, cmd: string[], what: string): Promise<string> {
  const r = await container.exec({ cmd, env: { LC_ALL: 'C' }, outputCapBytes: LISTING_CAP_BYTES, timeoutMs: LISTING_TIMEOUT_MS });
  const complaints = r.stderr.split('\n').filter((l) => l !== '' && !MISSING_ROOT.test(l));
  if (r.timedOut || r.stdoutTruncated || (r.exitCode !== 0 && (complaints.length > 0 || r.stderr === ''))) {
    throw new AuthbenchError('TRACE_UNREADABLE', `cannot list the ${what} of image ${container.image}`, {
      details: [
        `exit code ${String(r.exitCode)}${r.timedOut ? ' (timed out)' : ''}${r.stdoutTruncated ? ' (output truncated)' : ''}`,
        ...complaints.slice(-10),
      ],
      hint: 'the image needs GNU find (Debian/Ubuntu findutils)',
    });
  }
  return r.stdout;
}

export interface ImageCandidatesOptions {
  image: string;
  scoredRoots: AxisPatterns;
  /** Recorded as the `authbench.task` label on the container. */
  taskId?: string;
}

/** Start a container from `image`, snapshot it, remove it, and reduce the listing to a candidate snapshot. */
export async function candidatesFromImage(engine: Engine, options: ImageCandidatesOptions): Promise<CandidateSnapshot> {
  const roots = snapshotRoots(options.scoredRoots);
  if (roots.length === 0) throw new AuthbenchError('INVALID_ARGUMENT', 'the reference has no scored roots on any axis');
  await using container = await engine.startContainer({
    image: options.image,
    network: 'none',
    ...(options.taskId === undefined ? {} : { labels: { [LABELS.task]: options.taskId } }),
  });
  const fs = await snapshotContainer(container, roots);
  return buildCandidateSnapshot(fs, options.scoredRoots, { image: options.image });
}
