import { describe, expect, it } from 'vitest';
import { isUtf8, outputNotes, outputView, stripControlSequences } from './output-text.ts';

describe('stripControlSequences', () => {
  it.each([
    ['plain text stays', 'a\tb\nc é 漢字 ✓\n', 'a\tb\nc é 漢字 ✓\n', 0],
    ['colours (CSI SGR)', '\x1b[31mred\x1b[0m', 'red', 2],
    ['clear screen and cursor moves', '\x1b[2J\x1b[H\x1b[10;20Hx\x1b[?25l', 'x', 4],
    ['window title (OSC, BEL)', '\x1b]0;pwned\x07after', 'after', 1],
    ['clipboard write (OSC 52, ST)', 'a\x1b]52;c;ZWNobyBoaQ==\x1b\\b', 'ab', 1],
    ['hyperlink (OSC 8)', '\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\', 'link', 2],
    ['DCS string', 'a\x1bPq#0;2;0;0;0\x1b\\b', 'ab', 1],
    ['unterminated OSC ends at its line', 'a\x1b]0;title\nvisible', 'a\nvisible', 1],
    ['other escapes (charset, keypad, reset)', '\x1b(0q\x1b=\x1bcz', 'qz', 3],
    ['C1 CSI as a code point', 'a\u009b31mb', 'ab', 1],
    ['backspace, bell, NUL and DEL', 'ab\bc\x07\x00\x7f', 'abc', 4],
    ['a lone ESC at the end', 'x\x1b', 'x', 1],
  ])('%s', (_name, input, text, removed) => {
    expect(stripControlSequences(input)).toEqual({ text, removed });
  });

  it('keeps what a carriage return would overwrite: CRLF is a newline, a lone CR starts a new line', () => {
    expect(stripControlSequences('a\r\nb\r\n').text).toBe('a\nb\n');
    expect(stripControlSequences('rm -rf / done\rall good   \n').text).toBe('rm -rf / done\nall good   \n');
  });
});

describe('isUtf8 and outputView', () => {
  const bytes = (...xs: number[]): Uint8Array => Uint8Array.from(xs);

  it('tells UTF-8 from other bytes', () => {
    expect(isUtf8(Buffer.from('é ✓'), false)).toBe(true);
    expect(isUtf8(bytes(0x61, 0xff, 0x62), false)).toBe(false);
    expect(isUtf8(bytes(0xc3), false)).toBe(false);
  });

  it('lets the cap split a character at the very end, and only there', () => {
    // "é" is c3 a9: the cap kept its first byte.
    expect(isUtf8(bytes(0x61, 0xc3), true)).toBe(true);
    expect(outputView(bytes(0x61, 0xc3), true)).toEqual({ text: 'a', utf8: true, removed: 0 });
    expect(isUtf8(bytes(0xc3, 0x61), true)).toBe(false);
  });

  it('shows bytes that are not UTF-8 as U+FFFD and strips control sequences', () => {
    expect(outputView(bytes(0x61, 0xff, 0x1b, 0x5b, 0x32, 0x4a, 0x62), false)).toEqual({ text: 'a\ufffdb', utf8: false, removed: 1 });
  });
});

describe('outputNotes', () => {
  it('says nothing for clean, whole output', () => {
    expect(outputNotes('stdout', { text: 'x', utf8: true, removed: 0 }, 1, 1)).toEqual([]);
  });

  it('says when output was cut, not UTF-8, or had control sequences', () => {
    expect(outputNotes('stderr', { text: 'x', utf8: false, removed: 3 }, 1048576, 5000000)).toEqual([
      'stderr was cut: the first 1048576 of 5000000 bytes are kept',
      'stderr is not UTF-8: shown with U+FFFD for the bytes that are not (--json has them in base64)',
      'stderr: 3 terminal control sequence(s) removed (--json has the exact bytes)',
    ]);
  });
});
