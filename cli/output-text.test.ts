import { describe, expect, it } from 'vitest';
import { escapeJsonText, isUtf8, outputNotes, outputView, safeLine, safeText, showFormatCharacters, stripControlSequences } from './output-text.ts';

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
    expect(outputView(bytes(0x61, 0xc3), true)).toEqual({ text: 'a', utf8: true, removed: 0, shown: 0 });
    expect(isUtf8(bytes(0xc3, 0x61), true)).toBe(false);
  });

  it('shows bytes that are not UTF-8 as U+FFFD and strips control sequences', () => {
    expect(outputView(bytes(0x61, 0xff, 0x1b, 0x5b, 0x32, 0x4a, 0x62), false)).toEqual({ text: 'a\ufffdb', utf8: false, removed: 1, shown: 0 });
  });
});

describe('outputNotes', () => {
  it('says nothing for clean, whole output', () => {
    expect(outputNotes('stdout', { text: 'x', utf8: true, removed: 0, shown: 0 }, 1, 1)).toEqual([]);
  });

  it('says when output was cut, not UTF-8, or had control sequences', () => {
    expect(outputNotes('stderr', { text: 'x', utf8: false, removed: 3, shown: 2 }, 1048576, 5000000)).toEqual([
      'stderr was cut: the first 1048576 of 5000000 bytes are kept',
      'stderr is not UTF-8: shown with U+FFFD for the bytes that are not (--json has them in base64)',
      'stderr: 3 terminal control sequence(s) removed (--json has the exact bytes)',
      'stderr: 2 invisible or bidi format character(s) shown as \\u{…} (--json has the exact bytes)',
    ]);
  });
});

describe('format characters (bidi, invisible)', () => {
  it.each([
    ['right-to-left override (Trojan Source)', 'access = "user\u202e \u2066// admin\u2069 \u2066"', 'access = "user\\u{202e} \\u{2066}// admin\\u{2069} \\u{2066}"', 4],
    ['every embedding, override and isolate', '\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069', '\\u{202a}\\u{202b}\\u{202c}\\u{202d}\\u{202e}\\u{2066}\\u{2067}\\u{2068}\\u{2069}', 9],
    ['zero-width characters and marks', 'rm\u200b -rf\u200c\u200d\u200e\u200f', 'rm\\u{200b} -rf\\u{200c}\\u{200d}\\u{200e}\\u{200f}', 5],
    ['line and paragraph separators', 'a\u2028b\u2029c', 'a\\u{2028}b\\u{2029}c', 2],
    ['byte order mark', '\ufeffok', '\\u{feff}ok', 1],
    ['tag characters hiding a prompt (ASCII smuggling)', 'hi\u{e0049}\u{e0047}', 'hi\\u{e0049}\\u{e0047}', 2],
    ['ordinary text, accents and scripts untouched', 'é 漢字 שלום ✓', 'é 漢字 שלום ✓', 0],
  ])('%s are shown as \\u{…}', (_name, input, text, shown) => {
    expect(showFormatCharacters(input)).toEqual({ text, shown });
  });

  it('C1 controls U+0080–U+009F are removed as controls', () => {
    for (let code = 0x80; code <= 0x9f; code++) expect(stripControlSequences(`a${String.fromCharCode(code)}`), code.toString(16)).toEqual({ text: 'a', removed: 1 });
    // NEL is a lone control; OSC (8-bit) opens a string sequence that runs to BEL, ST or the end of its line.
    expect(safeText('a\u0085b\u009d0;title\u0007c')).toBe('abc');
  });

  it('outputView shows them and says so; the notes name the count', () => {
    const view = outputView(Buffer.from('safe\u202etxt.exe\n'), false);
    expect(view).toEqual({ text: 'safe\\u{202e}txt.exe\n', utf8: true, removed: 0, shown: 1 });
    expect(outputNotes('stdout', view, 20, 20)).toEqual(['stdout: 1 invisible or bidi format character(s) shown as \\u{…} (--json has the exact bytes)']);
  });
});

describe('safeText and safeLine', () => {
  it('safeText removes control sequences and shows format characters, keeping lines', () => {
    expect(safeText('build: \x1b]0;pwned\x07step 1\u202e\nstep 2\x1b[2J')).toBe('build: step 1\\u{202e}\nstep 2');
  });

  it("safeLine keeps authbench's own colours and nothing else", () => {
    const own = '\x1b[2m[1/2]\x1b[22m \x1b[33minfra\x1b[39m ';
    expect(safeLine(`${own}provider said: \x1b]52;c;ZWNobw==\x07\x1b[8mhidden\x1b[0m\u202eok`)).toBe(`${own}provider said: hidden\\u{202e}ok`);
  });

  it('safeLine does not let untrusted text conceal, blink, reverse or paint backgrounds', () => {
    for (const sgr of ['\x1b[8m', '\x1b[7m', '\x1b[5m', '\x1b[30m', '\x1b[41m', '\x1b[38;5;0m', '\x1b[0m']) {
      expect(safeLine(`a${sgr}b`), JSON.stringify(sgr)).toBe('ab');
    }
  });
});

describe('escapeJsonText', () => {
  it('escapes C1 and format characters in JSON and keeps the value', () => {
    const value = { out: 'a\u202eb\u0085c\u{e0041}\u2028é✓', n: 1 };
    const json = escapeJsonText(JSON.stringify(value));
    expect(json).toBe('{"out":"a\\u202eb\\u0085c\\udb40\\udc41\\u2028é✓","n":1}');
    expect(JSON.parse(json)).toEqual(value);
  });
});
