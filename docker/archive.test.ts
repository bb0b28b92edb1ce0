import { Readable } from 'node:stream';
import * as tarStream from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { collectCapped, firstTarEntry, tarContains, tarOfFiles } from './archive.ts';

/** A tar stream handed over in small chunks, as the daemon's response arrives. */
function chunked(tar: Buffer, size = 7): Readable {
  const parts: Buffer[] = [];
  for (let i = 0; i < tar.length; i += size) parts.push(tar.subarray(i, i + size));
  return Readable.from(parts);
}

async function tarWithLink(): Promise<Buffer> {
  const pack = tarStream.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (c) => {
    chunks.push(c as Buffer);
  });
  const done = new Promise<void>((resolve) => pack.on('end', () => resolve()));
  pack.entry({ name: 'sink/link', type: 'symlink', linkname: '/etc/CANARY-123' });
  pack.entry({ name: 'sink/a.txt', type: 'file' }, 'nothing here');
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}

describe('tarContains', () => {
  it('finds a needle split across chunk boundaries, in any file of the tar', async () => {
    const tar = await tarOfFiles('sink', { 'a.txt': 'x'.repeat(5000), 'b.txt': `${'y'.repeat(3001)}CANARY-ab12cd34ef${'z'.repeat(100)}` }, 0o644);
    for (const size of [1, 3, 7, 512, 4096]) expect(await tarContains(chunked(tar, size), ['CANARY-ab12cd34ef'])).toBe(true);
    expect(await tarContains(chunked(tar), ['CANARY-00000000'])).toBe(false);
  });

  it('reads file contents only (a link naming the canary is not a leak)', async () => {
    expect(await tarContains(chunked(await tarWithLink()), ['CANARY-123'])).toBe(false);
  });
});

describe('capped reads', () => {
  it('collectCapped stops past its cap with TOO_LARGE', async () => {
    expect((await collectCapped(chunked(Buffer.alloc(100)), 100, 'x')).length).toBe(100);
    await expect(collectCapped(chunked(Buffer.alloc(101)), 100, 'the archive of /app')).rejects.toMatchObject({ code: 'TOO_LARGE', message: /the archive of \/app is larger than 100 bytes/ });
  });

  it('firstTarEntry refuses a file over its cap from the header, before reading it', async () => {
    const tar = await tarOfFiles('', { 'reward.txt': '1'.repeat(2000) }, 0o644);
    await expect(firstTarEntry(chunked(tar), 1999, '/logs/verifier/reward.txt')).rejects.toMatchObject({ code: 'TOO_LARGE' });
    expect(await firstTarEntry(chunked(tar), 2000)).toMatchObject({ type: 'file' });
  });
});
