import { describe, expect, it } from 'vitest';
import { expandDockerfileVariables, parseDockerfile } from './index.ts';

/** What the task loader reads: FROM images as written and the final stage's WORKDIR. */
function info(text: string): { from: string[]; workdir: string | undefined; workdirUsesVariable: boolean } {
  const { stages } = parseDockerfile(text);
  const final = stages.at(-1);
  return { from: stages.map((s) => s.rawRef), workdir: final?.workdir, workdirUsesVariable: final?.workdirUsesVariable ?? false };
}

describe('parseDockerfile: FROM images and the final WORKDIR', () => {
  it.each<[string, string, { from: string[]; workdir: string | undefined; workdirUsesVariable?: boolean }]>([
    ['single stage', 'FROM ubuntu:24.04\nWORKDIR /app\n', { from: ['ubuntu:24.04'], workdir: '/app' }],
    ['no WORKDIR', 'FROM python:3.12-slim\nRUN true\n', { from: ['python:3.12-slim'], workdir: undefined }],
    ['ARG base, as written', 'ARG BASE=python:3.11\nFROM ${BASE}\n', { from: ['${BASE}'], workdir: undefined }],
    ['platform flag and lower case', 'from --platform=linux/amd64 debian:bookworm as b\nworkdir /w\n', { from: ['debian:bookworm'], workdir: '/w' }],
    ['last WORKDIR wins', 'FROM x\nWORKDIR /a\nWORKDIR /b\n', { from: ['x'], workdir: '/b' }],
    ['relative WORKDIR', 'FROM x\nWORKDIR /a\nWORKDIR b/../c\n', { from: ['x'], workdir: '/a/c' }],
    ['quoted WORKDIR', 'FROM x\nWORKDIR "/my app"\n', { from: ['x'], workdir: '/my app' }],
    ['final stage from external image', 'FROM x AS build\nWORKDIR /src\nFROM y\n', { from: ['x', 'y'], workdir: undefined }],
    ['final stage inherits from a named stage', 'FROM x AS Base\nWORKDIR /srv\nFROM base\nRUN true\n', { from: ['x', 'base'], workdir: '/srv' }],
    ['relative WORKDIR from the inherited one', 'FROM x AS b\nWORKDIR /srv\nFROM b\nWORKDIR sub\n', { from: ['x', 'b'], workdir: '/srv/sub' }],
    ['stage named through a global ARG', 'ARG S=b\nFROM x AS b\nWORKDIR /srv\nFROM ${S}\n', { from: ['x', '${S}'], workdir: '/srv' }],
    ['continuation lines and comments', 'FROM x\nRUN a \\\n# comment\n  && b\nWORKDIR \\\n  /cont\n', { from: ['x'], workdir: '/cont' }],
    ['blank lines inside a continuation', 'FROM x\nRUN a \\\n\n  && b\nWORKDIR /w\n', { from: ['x'], workdir: '/w' }],
    ['heredoc bodies are not instructions', 'FROM x\nWORKDIR /a\nRUN <<-EOT bash\n\tWORKDIR /b\n\tEOT\n', { from: ['x'], workdir: '/a' }],
    ['WORKDIR with a variable', 'FROM x\nENV D=/a\nWORKDIR $D\n', { from: ['x'], workdir: undefined, workdirUsesVariable: true }],
    ['relative WORKDIR after a variable', 'FROM x\nWORKDIR ${D}\nWORKDIR sub\n', { from: ['x'], workdir: undefined, workdirUsesVariable: true }],
    ['absolute WORKDIR after a variable', 'FROM x\nWORKDIR ${D}\nWORKDIR /abs\n', { from: ['x'], workdir: '/abs' }],
    ['no FROM', 'RUN true\nWORKDIR /a\n', { from: [], workdir: undefined }],
    ['CRLF line ends', 'FROM x\r\nWORKDIR /a\r\n', { from: ['x'], workdir: '/a' }],
  ])('%s', (_what, text, want) => {
    expect(info(text)).toEqual({ workdirUsesVariable: false, ...want });
  });
});

describe('parseDockerfile: heredocs', () => {
  const keywords = (text: string): string[] => parseDockerfile(text).instructions.map((i) => i.keyword);

  it.each<[string, string, string[]]>([
    ['plain heredoc', 'FROM x\nRUN <<EOF\nFROM y\nWORKDIR /b\nEOF\nUSER u\n', ['FROM', 'RUN', 'USER']],
    ['<<- matches a tab-indented delimiter', 'FROM x\nRUN <<-EOF\n\tFROM y\n\tEOF\nUSER u\n', ['FROM', 'RUN', 'USER']],
    ['without <<-, an indented delimiter is body', 'FROM x\nRUN <<EOF\n\tEOF\nFROM y\nEOF\nUSER u\n', ['FROM', 'RUN', 'USER']],
    ['double-quoted delimiter', 'FROM x\nRUN <<"EOF" bash\nFROM y\nEOF\nUSER u\n', ['FROM', 'RUN', 'USER']],
    ['single-quoted delimiter', "FROM x\nCOPY <<'END' /f\nFROM y\nEND\nUSER u\n", ['FROM', 'COPY', 'USER']],
    ['two heredocs on one line, bodies in order', 'FROM x\nCOPY <<A /a <<B /b\nFROM y\nA\nFROM z\nB\nUSER u\n', ['FROM', 'COPY', 'USER']],
    ['heredoc with a file descriptor', 'FROM x\nRUN cat 3<<EOF\nFROM y\nEOF\nUSER u\n', ['FROM', 'RUN', 'USER']],
    ['heredoc opened after a continuation', 'FROM x\nRUN \\\n  <<EOF bash\nFROM y\nEOF\nUSER u\n', ['FROM', 'RUN', 'USER']],
    ['body lines ending in a backslash are not continuations', 'FROM x\nRUN <<EOF\necho \\\nEOF\nUSER u\n', ['FROM', 'RUN', 'USER']],
    ['a quoted <<EOF is an argument, not a heredoc', 'FROM x\nRUN echo "<<EOF"\nUSER u\n', ['FROM', 'RUN', 'USER']],
    ['only RUN, COPY and ADD open heredocs', 'FROM x\nLABEL a=<<EOF\nUSER u\nEOF\n', ['FROM', 'LABEL', 'USER', 'EOF']],
    ['an unterminated heredoc runs to the end', 'FROM x\nRUN <<EOF\nUSER u\n', ['FROM', 'RUN']],
  ])('%s', (_what, text, want) => {
    expect(keywords(text)).toEqual(want);
  });

  it('keeps delimiter, quoting, tab stripping and body of each heredoc', () => {
    const [, copy] = parseDockerfile('FROM x\nCOPY <<-"A" /a <<B /b\n\tone\n\tA\ntwo\nB\n').instructions;
    expect(copy?.heredocs).toEqual([
      { delimiter: 'A', stripTabs: true, quoted: true, body: ['\tone'] },
      { delimiter: 'B', stripTabs: false, quoted: false, body: ['two'] },
    ]);
    expect(copy).toMatchObject({ keyword: 'COPY', startLine: 1, endLine: 1 });
  });

  it('spanEndLine covers the heredoc bodies and delimiters (the whole unterminated rest)', () => {
    const ins = parseDockerfile('FROM x\nRUN \\\n  <<A cat && <<B cat\none\nA\ntwo\nB\nUSER u\nRUN <<C\nnever closed\n').instructions;
    expect(ins.map((i) => [i.keyword, i.startLine, i.endLine, i.spanEndLine])).toEqual([
      ['FROM', 0, 0, 0],
      ['RUN', 1, 2, 6],
      ['USER', 7, 7, 7],
      ['RUN', 8, 8, 10],
    ]);
  });
});

describe('parseDockerfile: directives, lines and stages', () => {
  it('reads parser directives only at the top', () => {
    const df = parseDockerfile('# syntax=docker/dockerfile:1\n#check=skip=all\n# escape=\\\n\n# escape=`\nFROM x\n');
    expect(df.directives).toEqual({ syntax: 'docker/dockerfile:1', check: 'skip=all', escape: '\\' });
    expect(parseDockerfile('# a comment\n# syntax=x\nFROM x\n').directives).toEqual({});
  });

  it('# escape=` makes the backtick the continuation character', () => {
    const df = parseDockerfile('# escape=`\nFROM `\n  mcr.microsoft.com/windows `\n  AS w\nWORKDIR C:\\app\n');
    expect(df.stages.map((s) => [s.ref, s.alias, s.from.startLine, s.from.endLine])).toEqual([['mcr.microsoft.com/windows', 'w', 1, 3]]);
  });

  it('gives each instruction its physical line range, continuations and the comments among them included', () => {
    const df = parseDockerfile('# syntax=docker/dockerfile:1\n\nFROM \\\n# base\n  x AS a\nRUN <<EOF\nbody\nEOF\nUSER u\n');
    expect(df.instructions.map((i) => [i.keyword, i.startLine, i.endLine])).toEqual([
      ['FROM', 2, 4],
      ['RUN', 5, 5],
      ['USER', 8, 8],
    ]);
  });

  it('classifies stages, scratch and unresolved references', () => {
    const kinds = parseDockerfile('FROM a:1 AS one\nFROM one\nFROM scratch\nFROM ${NOPE}').stages.map((s) => [s.ref, s.kind, s.parent]);
    expect(kinds).toEqual([
      ['a:1', 'image', undefined],
      ['one', 'stage', 0],
      ['scratch', 'scratch', undefined],
      ['', 'unresolved', undefined],
    ]);
  });

  it('expands global ARGs in FROM (defaults that use earlier ARGs; build args win; ARGs after FROM do not apply)', () => {
    const df = parseDockerfile('ARG V=3.12\nARG IMG=python:${V} TAG\nFROM $IMG AS a\nARG LATE=y\nFROM ${LATE:-z}:${TAG:-1}', { TAG: '2' });
    expect(df.stages.map((s) => s.ref)).toEqual(['python:3.12', 'z:2']);
    expect([...df.globalArgs]).toEqual([
      ['V', '3.12'],
      ['IMG', 'python:3.12'],
      ['TAG', '2'],
    ]);
    expect(df.stages[0]?.instructions.map((i) => i.keyword)).toEqual(['ARG']);
  });

  it('unquotes ARG defaults and keeps FROM flags', () => {
    const df = parseDockerfile('ARG IMG="debian:bookworm slim"\nFROM --platform=$BUILDPLATFORM "$IMG" as b');
    expect(df.stages.map((s) => [s.flags, s.rawRef, s.ref, s.alias])).toEqual([[['--platform=$BUILDPLATFORM'], '$IMG', 'debian:bookworm slim', 'b']]);
  });

  it('expandDockerfileVariables', () => {
    const vars = new Map([['A', 'x'], ['E', '']]);
    expect(expandDockerfileVariables('$A-${A}-${E:-d}-${A:+y}-${E:+y}-${U}', vars)).toBe('x-x-d-y--');
  });
});
