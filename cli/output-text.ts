/**
 * A sandboxed command's output as the operator sees it. The command is
 * untrusted: its bytes may not be UTF-8, may have been cut at the output cap,
 * and may hold terminal control sequences (retitle the window, rewrite the
 * screen, hide text, OSC 52 clipboard writes) that must not reach the
 * operator's terminal. Human output gets the text with every control sequence
 * removed, invisible and bidi format characters shown as `\u{…}`, and a note for
 * each of these; `--json` keeps the exact bytes. Pure.
 *
 * The same goes for every other text authbench shows that came from inside a
 * container or from a model (build logs, validator and trace details, error
 * messages, report cells): `safeText` for plain text, `safeLine` for a line
 * authbench has coloured.
 */

/** One stream of output as kept, with what the human view must say about it. */
export interface OutputView {
  /** The text to print: decoded (U+FFFD for bytes that are not UTF-8), control sequences removed. */
  text: string;
  /** The kept bytes are UTF-8 (a sequence cut by the cap at the very end does not count against it). */
  utf8: boolean;
  /** Control sequences and control characters removed from `text`. */
  removed: number;
  /** Invisible or bidi format characters shown as `\u{…}` in `text`. */
  shown: number;
}

// ESC-introduced sequences (7-bit) and their 8-bit C1 forms, as ECMA-48 defines them:
// - OSC, DCS, SOS, PM, APC: a string up to BEL or ST (ESC \ or 0x9c); unterminated, up to the end of
//   its line (a terminal would swallow the rest of the output; the operator should still see it);
// - CSI: parameters, intermediates, one final byte;
// - any other escape: intermediates and one final byte (or a lone ESC at the end).
const STRING_SEQUENCE = /(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\n]*?(?:\x07|\x1b\\|\x9c|(?=\n)|$)/;
const CSI = /(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?/;
const OTHER_ESCAPE = /\x1b[\x20-\x2f]*[\x30-\x7e]?/;
// Every other C0 and C1 control except tab and newline (a lone CR is turned into a newline first).
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;
const SEQUENCES = new RegExp([STRING_SEQUENCE, CSI, OTHER_ESCAPE, CONTROL].map((r) => r.source).join('|'), 'g');

/**
 * Text without terminal control sequences: only printable text, tabs and newlines remain. A CR
 * that ends a line is dropped; any other CR becomes a newline, so text it would have overwritten
 * (a progress line, or a line hiding what came before it) stays visible.
 */
export function stripControlSequences(text: string): { text: string; removed: number } {
  let removed = 0;
  const out = text
    .replaceAll('\r\n', '\n')
    .replaceAll('\r', '\n')
    .replace(SEQUENCES, () => {
      removed++;
      return '';
    });
  return { text: out, removed };
}

// Unicode format characters (category Cf: bidi embeddings, overrides and isolates U+202A–U+202E and
// U+2066–U+2069, the marks U+200E/U+200F/U+061C, zero-width U+200B–U+200D and U+2060–U+2064, the BOM
// U+FEFF, tag characters U+E0000–U+E007F, …) and the line and paragraph separators U+2028/U+2029. A
// terminal does not act on them as it does on escapes, but they change what the operator reads:
// overrides reorder text ("Trojan Source", CVE-2021-42574) and the invisible ones hide text in plain
// sight (tag characters carry whole prompt injections). They are shown, not stripped: they are also
// legitimate in real text (Arabic and Hebrew marks, emoji joiners), so dropping them would alter the
// output silently, while `\u{202e}` keeps every character accounted for and defeats the trick.
const FORMAT = /[\p{Cf}\u2028\u2029]/gu;

const codePoint = (c: string): string => (c.codePointAt(0) ?? 0).toString(16).padStart(4, '0');

/** Text with every format character shown as `\u{202e}`, and how many there were. */
export function showFormatCharacters(text: string): { text: string; shown: number } {
  let shown = 0;
  const out = text.replace(FORMAT, (c) => {
    shown++;
    return `\\u{${codePoint(c)}}`;
  });
  return { text: out, shown };
}

/**
 * Untrusted text (from a container, a model, a dataset) made safe to print: control sequences
 * removed, format characters shown. Newlines and tabs stay. Use it on the untrusted part only,
 * before colouring: the colours authbench adds are control sequences too.
 */
export function safeText(text: string): string {
  return showFormatCharacters(stripControlSequences(text).text).text;
}

// The colours and weights authbench's own lines use (chalk: bold, dim, red…cyan, gray, and their
// resets). Nothing that hides text is on the list (conceal, black, backgrounds, reverse video).
const OWN_STYLE = /(\x1b\[(?:1|2|22|3[1-6]|39|90)m)/;

/**
 * A line authbench built and coloured that may embed untrusted text (a progress line naming a
 * rollout and its error): the colours above are kept, everything else is made safe as by `safeText`.
 * For lines whose parts cannot be told apart any more; where they can, `safeText` the part.
 */
export function safeLine(line: string): string {
  return line
    .split(OWN_STYLE)
    .map((part, i) => (i % 2 === 1 ? part : safeText(part)))
    .join('');
}

/**
 * JSON text with C1 controls and format characters written as `\uXXXX` escapes: the same JSON
 * value, but `--json` printed to a terminal cannot reorder or hide text either (JSON.stringify
 * escapes only U+0000–U+001F). These characters occur only inside strings, where an escape is
 * always valid; one above U+FFFF is written as its two UTF-16 units.
 */
export function escapeJsonText(json: string): string {
  return json.replace(/[\u0080-\u009f\p{Cf}\u2028\u2029]/gu, (c) => {
    let out = '';
    for (let i = 0; i < c.length; i++) out += `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`;
    return out;
  });
}

/** Whether bytes are UTF-8; with `cut`, an incomplete sequence at the very end is allowed (the cap split it). */
export function isUtf8(bytes: Uint8Array, cut: boolean): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: cut });
    return true;
  } catch {
    return false;
  }
}

/** The kept bytes of one stream, for a terminal. */
export function outputView(bytes: Uint8Array, truncated: boolean): OutputView {
  // Decoding streams when cut, so a character the cap split is left out rather than shown as U+FFFD.
  const decoded = new TextDecoder('utf-8').decode(bytes, { stream: truncated });
  const { text: stripped, removed } = stripControlSequences(decoded);
  const { text, shown } = showFormatCharacters(stripped);
  return { text, utf8: isUtf8(bytes, truncated), removed, shown };
}

/** What the human view says about one stream: cut, not UTF-8, control sequences removed, format characters shown. Empty when none applies. */
export function outputNotes(stream: 'stdout' | 'stderr', view: OutputView, kept: number, written: number): string[] {
  const notes: string[] = [];
  if (written > kept) notes.push(`${stream} was cut: the first ${kept} of ${written} bytes are kept`);
  if (!view.utf8) notes.push(`${stream} is not UTF-8: shown with U+FFFD for the bytes that are not (--json has them in base64)`);
  if (view.removed > 0) notes.push(`${stream}: ${view.removed} terminal control sequence(s) removed (--json has the exact bytes)`);
  if (view.shown > 0) notes.push(`${stream}: ${view.shown} invisible or bidi format character(s) shown as \\u{…} (--json has the exact bytes)`);
  return notes;
}
