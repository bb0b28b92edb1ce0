import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { AuthbenchError } from '../core/index.ts';
import { formatAuthbenchError, renderError } from './render-error.ts';

// A failed build quotes its last log lines, which the Dockerfile's RUN steps wrote: untrusted.
const hostile = 'step 3 \x1b]52;c;cm0gLXJmIC8=\x07\x1b[2J\u202efailed';

describe('formatAuthbenchError', () => {
  it('shows message, file, details, hint and cause without their control sequences', () => {
    const e = new AuthbenchError('IMAGE_BUILD_FAILED', `build of t: ${hostile}`, {
      file: `tasks/x\u202e/Dockerfile`,
      details: [hostile, 'plain line'],
      hint: `see ${hostile}`,
      cause: new Error(hostile),
    });
    const text = stripVTControlCharacters(formatAuthbenchError(e));
    const shown = 'step 3 \\u{202e}failed';
    expect(text).toBe(
      [
        `authbench: IMAGE_BUILD_FAILED tasks/x\\u{202e}/Dockerfile: build of t: ${shown}`,
        `  ${shown}`,
        '  plain line',
        `  hint: see ${shown}`,
        `  cause: ${shown}`,
        '',
      ].join('\n'),
    );
    // Only authbench's own colours remain: every escape left is an SGR colour.
    expect(formatAuthbenchError(e).replace(/\x1b\[[0-9;]*m/g, '')).not.toMatch(/[\x1b\x07\u202e]/);
  });

  it('makes an internal error safe too, and exits 125', () => {
    let out = '';
    expect(renderError(new Error(hostile), (s) => (out += s))).toBe(125);
    expect(stripVTControlCharacters(out)).toContain('authbench: internal error: step 3 \\u{202e}failed');
    expect(out.replace(/\x1b\[[0-9;]*m/g, '')).not.toMatch(/[\x07\u202e]/);
  });
});
