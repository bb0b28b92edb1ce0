import { describe, expect, it } from 'vitest';
import { paint } from './dataset.ts';

describe('dataset check cells', () => {
  // A cell quotes what a task's container said (an oracle's error, a build failure's reason).
  it('are made safe before they are coloured', () => {
    const cell = paint({ text: 'FAIL: \x1b]52;c;cm0gLXJm\x07\x1b[2Jexit 1\u202e\u2066', tone: 'bad' });
    const plain = cell.replace(/\x1b\[(?:1|2|22|3[1-6]|39|90)m/g, '');
    expect(plain).toBe('FAIL: exit 1\\u{202e}\\u{2066}');
  });

  it('leave ordinary text as it is', () => {
    expect(paint({ text: 'ok (0.91 / 1.00 / 0.95) é', tone: 'plain' })).toBe('ok (0.91 / 1.00 / 0.95) é');
  });
});
