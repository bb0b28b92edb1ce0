/**
 * The persistent shell's driver and its framing (`eval --shell persistent`); pure but for the
 * nonce. The session agent (ab-serve.c run_shell_call) starts one bash per episode under strace
 * and the launcher, its stdin a socket, and writes each call to it as
 *   <nonce> NUL <command> NUL
 * The driver (below) runs the command *in* the shell — so cwd, variables, exported env,
 * functions, aliases and `set -o` options carry over, as in a terminal — with /dev/null as its
 * stdin (`cat`, `read x` get end of file, never the call stream) and without the socket: external
 * programs cannot reach it (a socket cannot be reopened through /proc), and the agent reads
 * delimiters only from it, never from output. It then writes `<nonce> <status>` back on the
 * socket: that line, with this call's nonce, is the end of the call's window.
 *
 * The nonce is new per call (128 random bits), so a line printed by a command, or replayed from
 * an earlier call, never ends a window. What a command can still do: it runs in the shell, so a
 * builtin can read the driver's variables and the socket's saved descriptor and end its own
 * window early, fake its own status, or break the driver (a function named like a builtin, a
 * DEBUG trap). That only moves its own later activity into the next window of the same episode
 * — same launcher domain, same policy, same trace, nothing unrecorded — and a broken driver is
 * seen (the shell waits for input without ending the call, or its exe changed) and replaced.
 */
import { randomBytes } from 'node:crypto';
import { AuthbenchError } from '../../core/index.ts';

/**
 * The driver, parsed once by bash -c: later aliases cannot change it (aliases apply when a line
 * is read), and it names builtins through `builtin` so a function called `read` or `printf` does
 * not either. Alias expansion is on, as in an interactive shell, so aliases carry over.
 */
export const SHELL_DRIVER = [
  'shopt -s expand_aliases',
  "while IFS= builtin read -r -d '' __ab_nonce && IFS= builtin read -r -d '' __ab_command; do",
  '  builtin eval "$__ab_command" </dev/null',
  "  builtin printf '%s %d\\n' \"$__ab_nonce\" \"$?\" >&0",
  'done',
].join('\n');

/** The shell the agent starts (under strace and the launcher): no startup files, only the driver. */
export function persistentShellArgv(): string[] {
  return ['bash', '--noprofile', '--norc', '-c', SHELL_DRIVER];
}

/** A call's nonce: 128 random bits, lowercase hex (what the agent accepts). */
export function newShellNonce(): string {
  return randomBytes(16).toString('hex');
}

/** The bytes written to the shell for one call. A NUL would end the command early: refused, as for argv. */
export function frameShellCall(nonce: string, command: string): Buffer {
  if (!/^[0-9a-f]{16,64}$/.test(nonce)) throw new AuthbenchError('INVALID_ARGUMENT', 'a shell nonce is 16 to 64 lowercase hex digits', { field: 'nonce' });
  if (command.includes('\0')) throw new AuthbenchError('INVALID_ARGUMENT', 'the command contains a NUL byte', { field: 'command' });
  return Buffer.from(`${nonce}\0${command}\0`, 'utf8');
}
