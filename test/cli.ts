import { stripVTControlCharacters } from 'node:util';
import { vi } from 'vitest';
import { main } from '../cli/main.ts';

/** Run the CLI in-process as bin/authbench.ts does; return the exit code and what it printed (colours stripped). */
export async function runCli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const stdout = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => {
    out += String(s);
    return true;
  });
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => {
    err += String(s);
    return true;
  });
  // Each call is a fresh process as far as the exit code goes: an earlier call's failure must not leak into this one.
  process.exitCode = undefined;
  try {
    const code = await main(argv);
    return { code, out: stripVTControlCharacters(out), err: stripVTControlCharacters(err) };
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
  }
}
