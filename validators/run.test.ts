import { describe, expect, it } from 'vitest';
import type { Container } from '../docker/index.ts';
import { collectedReader } from './run.ts';

/** A container whose only use is readFile, which records what was asked. */
function reading(files: Record<string, string>): { container: Container; asked: string[] } {
  const asked: string[] = [];
  const container = {
    readFile: (path: string) => {
      asked.push(path);
      return Promise.resolve(files[path] === undefined ? undefined : Buffer.from(files[path]));
    },
  } as unknown as Container;
  return { container, asked };
}

describe('collectedReader', () => {
  it('answers from the collected files without a Docker call when the directory held nothing else', async () => {
    const { container, asked } = reading({});
    const read = collectedReader({ files: { 'reward.txt': Buffer.from('1\n').toString('base64') }, other: 0 });
    expect(await read?.(container, '/logs/verifier/reward.txt')).toEqual({ text: '1\n' });
    expect(await read?.(container, '/logs/verifier/reward.json')).toEqual({});
    expect(asked).toEqual([]);
  });

  it('reads a name it did not collect on its own when other entries were there (a symlink, a directory)', async () => {
    const { container, asked } = reading({ '/logs/verifier/reward.json': '{"reward": 1}' });
    const read = collectedReader({ files: {}, other: 1 });
    expect(await read?.(container, '/logs/verifier/reward.json')).toEqual({ text: '{"reward": 1}' });
    expect(asked).toEqual(['/logs/verifier/reward.json']);
  });

  it('knows a missing directory holds nothing, and reads paths outside it on their own', async () => {
    const { container, asked } = reading({ '/elsewhere/x': 'x' });
    const read = collectedReader('missing');
    expect(await read?.(container, '/logs/verifier/reward.txt')).toEqual({});
    expect(await read?.(container, '/elsewhere/x')).toEqual({ text: 'x' });
    expect(asked).toEqual(['/elsewhere/x']);
  });

  it('leaves the old way to the caller when nothing was collected', () => {
    expect(collectedReader(undefined)).toBeUndefined();
  });
});
