import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { AuthbenchError } from '../../core/index.ts';
import { frameShellCall, newShellNonce, persistentShellArgv, SHELL_DRIVER } from './persistent-shell.ts';

/**
 * The driver run by a local bash, its stdin a file of framed calls (as the agent's socket would
 * deliver them) and its fd 0 writes captured: what the agent would read as delimiters.
 */
function drive(calls: readonly { nonce: string; command: string }[]): { stdout: string; delimiters: string[] } {
  const input = Buffer.concat(calls.map((c) => frameShellCall(c.nonce, c.command)));
  // The delimiters go to fd 0 in the agent (a socket); here fd 0 is read-only, so the driver's
  // `>&0` is pointed at a pipe on fd 3 by rewriting only that redirection.
  const driver = SHELL_DRIVER.replace('>&0', '>&3');
  const r = spawnSync('bash', ['--noprofile', '--norc', '-c', driver], { input, stdio: ['pipe', 'pipe', 'pipe', 'pipe'], encoding: 'buffer' });
  const fd3 = (r.output[3] as Buffer | null)?.toString('utf8') ?? '';
  return { stdout: r.stdout.toString('utf8'), delimiters: fd3.split('\n').filter((l) => l !== '') };
}

describe('persistent shell framing', () => {
  it('frames a call as nonce NUL command NUL', () => {
    const nonce = 'ab'.repeat(16);
    expect(frameShellCall(nonce, 'echo hi').toString('utf8')).toBe(`${nonce}\0echo hi\0`);
  });

  it('refuses a command with a NUL (it would end the call early) and a nonce the agent would not take', () => {
    expect(() => frameShellCall('ab'.repeat(16), 'echo a\0echo b')).toThrow(AuthbenchError);
    expect(() => frameShellCall('AB'.repeat(16), 'true')).toThrow(AuthbenchError);
    expect(() => frameShellCall('abc', 'true')).toThrow(AuthbenchError);
  });

  it('draws a new 128-bit lowercase hex nonce each time', () => {
    const a = newShellNonce();
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(newShellNonce()).not.toBe(a);
  });

  it('starts bash without startup files, running only the driver', () => {
    expect(persistentShellArgv()).toEqual(['bash', '--noprofile', '--norc', '-c', SHELL_DRIVER]);
  });
});

describe('the driver (local bash)', () => {
  const n1 = '1'.repeat(32);
  const n2 = '2'.repeat(32);
  const n3 = '3'.repeat(32);

  it('ends each call with its nonce and status, and keeps state between calls', () => {
    const r = drive([
      { nonce: n1, command: 'cd /; X=1; f() { echo "f:$1"; }; alias hi="echo hello"; false' },
      { nonce: n2, command: 'pwd; echo "$X"; f a; hi' },
    ]);
    expect(r.delimiters).toEqual([`${n1} 1`, `${n2} 0`]);
    expect(r.stdout).toBe('/\n1\nf:a\nhello\n');
  });

  it('gives a command /dev/null, not the call stream, as stdin', () => {
    const r = drive([
      { nonce: n1, command: 'cat; read -r x; echo "read:$?:${x-}"' },
      { nonce: n2, command: 'echo second' },
    ]);
    expect(r.stdout).toBe('read:1:\nsecond\n');
    expect(r.delimiters).toEqual([`${n1} 0`, `${n2} 0`]);
  });

  it('is not changed by functions or aliases named like what it runs', () => {
    const r = drive([
      { nonce: n1, command: 'read() { echo hijacked; }; printf() { echo hijacked; }; eval() { echo hijacked; }; alias builtin=echo' },
      { nonce: n2, command: 'echo ok' },
      { nonce: n3, command: 'exit 4' },
    ]);
    expect(r.stdout).toBe('ok\n');
    expect(r.delimiters).toEqual([`${n1} 0`, `${n2} 0`]);
  });
});
