/**
 * An in-memory Engine for unit tests of code that builds images and hands
 * them on (jobs, gen-gold) without a Docker daemon: builds answer at once
 * with a deterministic tag, or fail as the test says; anything that would
 * need a real daemon (containers, volumes, ping) rejects with a plain Error,
 * so a test that reaches one fails loudly. Not exported from index.ts.
 */
import type { BuildRequest, BuildResult, Engine } from './types.ts';

export const FAKE_ENGINE_UNSUPPORTED = 'fake engine: no Docker daemon in unit tests';

export interface FakeEngine extends Engine {
  /** Every build request, in order. */
  readonly builds: BuildRequest[];
}

/** `fail(request)` returns the error a build throws, or undefined for a build that succeeds. */
export function fakeEngine(options: { fail?: (request: BuildRequest) => Error | undefined } = {}): FakeEngine {
  const builds: BuildRequest[] = [];
  const stats = { buildCalls: 0, cacheHits: 0 };
  const unsupported = (): Promise<never> => Promise.reject(new Error(FAKE_ENGINE_UNSUPPORTED));
  return {
    endpoint: 'fake://engine',
    builds,
    stats,
    ping: unsupported,
    startContainer: unsupported,
    imageInfo: unsupported,
    volumeExists: unsupported,
    createVolume: unsupported,
    removeVolume: unsupported,
    buildImage(request: BuildRequest): Promise<BuildResult> {
      builds.push(request);
      const failure = options.fail?.(request);
      if (failure !== undefined) return Promise.reject(failure);
      stats.cacheHits += 1;
      const hash = `fake${builds.length}`;
      return Promise.resolve({ tag: `${request.repository}:${hash}`, imageId: `sha256:${hash}`, contentHash: hash, built: false, substitutions: [] });
    },
  };
}
