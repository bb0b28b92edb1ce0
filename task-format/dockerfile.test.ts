import { describe, expect, it } from 'vitest';
import { parseDockerfile } from './index.ts';

describe('parseDockerfile', () => {
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
    ['continuation lines and comments', 'FROM x\nRUN a \\\n# comment\n  && b\nWORKDIR \\\n  /cont\n', { from: ['x'], workdir: '/cont' }],
    ['heredoc bodies are not instructions', 'FROM x\nWORKDIR /a\nRUN <<-EOT bash\n\tWORKDIR /b\n\tEOT\n', { from: ['x'], workdir: '/a' }],
    ['WORKDIR with a variable', 'FROM x\nENV D=/a\nWORKDIR $D\n', { from: ['x'], workdir: undefined, workdirUsesVariable: true }],
    ['relative WORKDIR after a variable', 'FROM x\nWORKDIR ${D}\nWORKDIR sub\n', { from: ['x'], workdir: undefined, workdirUsesVariable: true }],
    ['absolute WORKDIR after a variable', 'FROM x\nWORKDIR ${D}\nWORKDIR /abs\n', { from: ['x'], workdir: '/abs' }],
    ['no FROM', 'RUN true\nWORKDIR /a\n', { from: [], workdir: undefined }],
  ])('%s', (_what, text, want) => {
    expect(parseDockerfile(text)).toEqual({ workdirUsesVariable: false, ...want });
  });
});
