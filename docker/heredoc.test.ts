import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDockerfile } from '../core/index.ts';
import { expandHeredocBody, HEREDOC_CONTEXT_DIR, translateHeredocs } from './heredoc.ts';

/**
 * What the legacy builder does with a shell-form RUN: `/bin/sh -c <args>`.
 * Running the translated instructions through the host's sh checks the
 * meaning (expansion, tab stripping, interpreters), not just the text.
 */
function runLegacy(dockerfile: string, env: Record<string, string> = {}): { stdout: string; status: number | null; runs: number } {
  const cwd = mkdtempSync(join(tmpdir(), 'heredoc-test-'));
  try {
    let stdout = '';
    let status: number | null = 0;
    const runs = parseDockerfile(dockerfile).instructions.filter((i) => i.keyword === 'RUN');
    for (const ins of runs) {
      expect(ins.heredocs, 'a translated RUN has no heredoc left').toEqual([]);
      const r = spawnSync('/bin/sh', ['-c', ins.args], { cwd, env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env }, encoding: 'utf8' });
      stdout += r.stdout;
      status = r.status;
      if (status !== 0) break;
    }
    return { stdout, status, runs: runs.length };
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

describe('translateHeredocs: RUN', () => {
  it('leaves a Dockerfile without heredocs untouched', () => {
    const text = 'FROM x\nRUN echo "<<EOF"\n';
    expect(translateHeredocs(text)).toEqual({ text, files: [], translations: [] });
  });

  it('quoted delimiter: no expansion; unquoted: the shell expands at build time', () => {
    const text = ['FROM x', "RUN cat <<'EOF'", 'quoted $GREETING $(echo sub)', 'EOF', 'RUN cat <<EOF', 'plain $GREETING $(echo sub)', 'EOF', ''].join('\n');
    const out = translateHeredocs(text);
    expect(runLegacy(out.text, { GREETING: 'hi' }).stdout).toBe('quoted $GREETING $(echo sub)\nplain hi sub\n');
    expect(out.translations.map((t) => t.detail)).toEqual([
      "RUN cat <<'EOF' (1 line): the shell runs the heredoc (EOF: no expansion)",
      'RUN cat <<EOF (1 line): the shell runs the heredoc (EOF: expanded by the shell)',
    ]);
  });

  it('a bare RUN <<EOF body is the stage shell script (its exit status counts)', () => {
    const ok = translateHeredocs('FROM x\nRUN <<EOF\nset -e\nx=1\necho "x=$x"\nEOF\n');
    expect(runLegacy(ok.text)).toMatchObject({ stdout: 'x=1\n', status: 0 });
    const failing = translateHeredocs('FROM x\nRUN <<EOF\nfalse\necho not reached; exit 3\nEOF\n');
    expect(runLegacy(failing.text).status).toBe(3);
    const setE = translateHeredocs('FROM x\nRUN <<EOF\nset -e\nfalse\necho not reached\nEOF\n');
    expect(runLegacy(setE.text)).toMatchObject({ stdout: '', status: 1 });
  });

  it('a #! body runs with its own interpreter, then leaves nothing behind', () => {
    const out = translateHeredocs("FROM x\nRUN <<'PY'\n#!/usr/bin/env python3\nimport sys\nprint('py', sys.version_info[0])\nPY\n");
    expect(runLegacy(out.text)).toMatchObject({ stdout: 'py 3\n', status: 0 });
    expect(out.translations[0]?.detail).toContain('own #! interpreter');
    expect(out.text).toContain('rm -f "$f"');
  });

  it('interpreters reading the heredoc on stdin: RUN python3 - <<PY, RUN python3 <<EOF', () => {
    const text = ["FROM x", "RUN python3 - <<'PY'", "print('dash', 6 * 7)", 'PY', 'RUN python3 <<EOF', "print('$WHO')", 'EOF', ''].join('\n');
    expect(runLegacy(translateHeredocs(text).text, { WHO: 'shell-expanded' }).stdout).toBe('dash 42\nshell-expanded\n');
  });

  it('several heredocs on one line, each body to its own command', () => {
    const text = ['FROM x', 'RUN <<A cat && <<B cat', 'first', 'A', 'second', 'B', ''].join('\n');
    const out = translateHeredocs(text);
    expect(runLegacy(out.text).stdout).toBe('first\nsecond\n');
    expect(out.translations[0]?.detail).toContain('heredocs (A: expanded by the shell; B: expanded by the shell)');
  });

  it('<<- strips leading tabs from the body and the delimiter line', () => {
    const text = 'FROM x\nRUN cat <<-EOF\n\t\tindented\n\tEOF\nRUN <<-EOF\n\techo bare\n\tEOF\n';
    expect(runLegacy(translateHeredocs(text).text).stdout).toBe('indented\nbare\n');
  });

  it('keeps every later instruction on its line and RUN flags in place', () => {
    const text = 'FROM x\nRUN --network=none <<EOF\necho a\necho b\nEOF\nUSER u\n';
    const out = translateHeredocs(text);
    const lines = out.text.split('\n');
    expect(lines[1]).toMatch(/^RUN --network=none eval /);
    expect(lines[5]).toBe('USER u');
    expect(out.translations[0]?.line).toBe(2);
  });

  // The whole command is one argument of `sh -c` (BuildKit's too), which the kernel caps at 128 KiB.
  it('splits a long script over continuation lines (the legacy parser limits a line to 64 KiB)', () => {
    const body = Array.from({ length: 1500 }, (_, i) => `echo line-${i}-${'x'.repeat(40)}`).join('\n');
    const out = translateHeredocs(`FROM x\nRUN <<EOF\n${body}\nEOF\nUSER u\n`);
    const lines = out.text.split('\n');
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThan(8192);
    expect(lines.indexOf('USER u')).toBe(1503);
    const result = runLegacy(out.text);
    expect(result.stdout.split('\n')).toHaveLength(1501);
    expect(result.stdout).toContain(`line-1499-${'x'.repeat(40)}`);
  });

  it('uses the Dockerfile escape character for continuations', () => {
    const body = Array.from({ length: 800 }, (_, i) => `echo ${i}${'y'.repeat(20)}`).join('\n');
    const out = translateHeredocs(`# escape=\`\nFROM x\nRUN <<EOF\n${body}\nEOF\n`);
    expect(out.text.split('\n')[2]?.endsWith('`')).toBe(true);
    expect(parseDockerfile(out.text).instructions.filter((i) => i.keyword === 'RUN')).toHaveLength(1);
  });
});

describe('translateHeredocs: COPY and ADD', () => {
  it('writes each body to a context file named after its delimiter (mode 0664)', () => {
    const out = translateHeredocs("FROM x\nCOPY --chown=1:1 <<'A' <<B /etc/app/\nalpha\nA\nbeta\nB\nUSER u\n");
    expect(out.files.map((f) => [f.path.replace(/\/\d+-[0-9a-f]{12}\//, '/N/'), f.content.toString(), f.mode.toString(8)])).toEqual([
      [`${HEREDOC_CONTEXT_DIR}/N/A`, 'alpha\n', '664'],
      [`${HEREDOC_CONTEXT_DIR}/N/B`, 'beta\n', '664'],
    ]);
    const copy = out.text.split('\n')[1] ?? '';
    expect(copy).toBe(`COPY --chown=1:1 ${out.files[0]?.path ?? ''} ${out.files[1]?.path ?? ''} /etc/app/`);
    expect(out.text.split('\n')[6]).toBe('USER u');
  });

  it('expands Dockerfile variables in an unquoted body (ARG, ENV, the base image ENV), not in a quoted one', () => {
    const text = [
      'ARG VERSION=1',
      'FROM base AS b',
      'ARG VERSION',
      'ENV NAME=app HOME_DIR=/srv/$NAME',
      'COPY <<EOF /conf',
      '$NAME v${VERSION} in ${HOME_DIR} on $IMAGE_VAR ${MISSING:-fallback} \\$literal',
      'EOF',
      "ADD <<'EOF' /raw",
      '$NAME',
      'EOF',
      '',
    ].join('\n');
    const out = translateHeredocs(text, { buildArgs: { VERSION: '2' }, imageEnv: (ref) => (ref === 'base' ? { IMAGE_VAR: 'debian' } : undefined) });
    expect(out.files.map((f) => f.content.toString())).toEqual(['app v2 in /srv/app on debian fallback $literal\n', '$NAME\n']);
    expect(out.translations.map((t) => t.detail)).toEqual([
      'COPY <<EOF /conf (1 line): 1 file added to the build context (variables expanded)',
      "ADD <<'EOF' /raw (1 line): 1 file added to the build context",
    ]);
  });

  it('<<- strips tabs from a COPY body too', () => {
    expect(translateHeredocs('FROM x\nCOPY <<-EOF /f\n\tone\n\t\ttwo\n\tEOF\n').files[0]?.content.toString()).toBe('one\ntwo\n');
  });

  it('an empty body is an empty file', () => {
    expect(translateHeredocs('FROM x\nCOPY <<EOF /empty\nEOF\n').files[0]?.content.toString()).toBe('');
  });
});

describe('expandHeredocBody', () => {
  it('expands the Dockerfile forms and keeps escaped dollars', () => {
    const vars = new Map([['A', 'x']]);
    expect(expandHeredocBody('$A ${A} ${A:+set} ${B:-d} \\$A', vars)).toBe('x x set d $A');
  });
});

describe('encoding', () => {
  it('a #! body decodes byte for byte (quotes of every kind), also when the delimiter ends the file', () => {
    const body = "#!/bin/sh\nprintf '%s' \"a'b\\\"c\" > out.txt\ncat out.txt\n";
    const out = translateHeredocs(`FROM x\nRUN <<EOF\n${body}EOF`);
    const encoded = /printf '%s' (\S+) \| base64 -d/.exec(out.text)?.[1] ?? '';
    expect(Buffer.from(encoded, 'base64').toString()).toBe(body);
    expect(runLegacy(out.text).stdout).toBe('a\'b"c');
  });
});
