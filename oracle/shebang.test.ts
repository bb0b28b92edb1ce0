import { describe, expect, it } from 'vitest';
import { parseShebangs } from './shebang.ts';

describe('parseShebangs', () => {
  it('keeps the interpreter path of each script and ignores the rest', () => {
    const out = parseShebangs(['/app/tools/stylecheck\t#!/usr/bin/env python3', '/app/run.sh\t#! /bin/bash -e', 'junk line', '/x\t#!relative'].join('\n'));
    expect([...out]).toEqual([
      ['/app/tools/stylecheck', '/usr/bin/env'],
      ['/app/run.sh', '/bin/bash'],
    ]);
  });
});
