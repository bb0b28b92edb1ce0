/**
 * The kernel runs a script's `#!` interpreter without an execve strace can
 * show, so the gold would miss it (and enforcement would deny the script).
 * After the oracle ran, read the first line of every executable it ran and
 * keep the interpreters. The script stays in bash so it works in any image.
 */
import type { Container } from '../docker/index.ts';

const READ_SHEBANGS = [
  'for f in "$@"; do',
  '  [ -f "$f" ] || continue',
  '  l=$(head -c 256 -- "$f" 2>/dev/null | head -n 1 | tr -d "\\000")',
  '  case "$l" in "#!"*) printf "%s\\t%s\\n" "$f" "$l";; esac',
  'done',
].join('\n');

/** `path<TAB>#!/interp args` lines → path → interpreter path (the first word). Pure. */
export function parseShebangs(output: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of output.split('\n')) {
    const tab = line.indexOf('\t');
    if (tab < 0) continue;
    const interp = line.slice(tab + 1).replace(/^#!\s*/, '').trim().split(/\s+/)[0];
    if (interp !== undefined && interp.startsWith('/')) out.set(line.slice(0, tab), interp);
  }
  return out;
}

export async function readShebangs(container: Container, paths: readonly string[]): Promise<Map<string, string>> {
  if (paths.length === 0) return new Map();
  const r = await container.exec({ cmd: ['bash', '-c', READ_SHEBANGS, 'read-shebangs', ...paths], timeoutMs: 60_000 });
  return parseShebangs(r.stdout);
}
