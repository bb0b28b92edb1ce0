import { AuthbenchError } from '../core/index.ts';

/** dockerode rejects with an Error carrying the HTTP status and the daemon's JSON body. */
interface DockerodeError {
  statusCode?: number;
  json?: { message?: string } | null;
  reason?: string;
  message?: string;
}

export function dockerStatus(e: unknown): number | undefined {
  if (e === null || typeof e !== 'object') return undefined;
  const code = (e as DockerodeError).statusCode;
  return typeof code === 'number' ? code : undefined;
}

/** The daemon's own message when there is one (it names the image/path), else the client's. */
export function dockerMessage(e: unknown): string {
  if (e === null || typeof e !== 'object') return String(e);
  const err = e as DockerodeError;
  const fromJson = err.json?.message;
  if (typeof fromJson === 'string' && fromJson !== '') return fromJson.trim();
  const message = (err.message ?? 'unknown Docker error').trim();
  // docker-modem prefixes "(HTTP code 404) no such container - " using its own
  // per-endpoint label, which is misleading (a missing *path* says "no such container").
  const m = /^\(HTTP code \d+\) [^]*? - ([^]*)$/.exec(message);
  return m?.[1]?.trim() || message;
}

/** A 404 about a path inside a container, as opposed to the container itself. */
export function isMissingPath(e: unknown): boolean {
  return dockerStatus(e) === 404 && /could not find the file|no such file or directory/i.test(dockerMessage(e));
}

/** Wrap any dockerode failure as DOCKER_API, keeping AuthbenchErrors as they are. */
export function apiError(action: string, e: unknown): AuthbenchError {
  if (e instanceof AuthbenchError) return e;
  return new AuthbenchError('DOCKER_API', `${action}: ${dockerMessage(e)}`, { cause: e });
}
