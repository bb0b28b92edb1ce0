/**
 * A sandboxed command's output as the operator sees it. The command is
 * untrusted: its bytes may not be UTF-8, may have been cut at the output cap,
 * and may hold terminal control sequences (retitle the window, rewrite the
 * screen, hide text, OSC 52 clipboard writes) that must not reach the
 * operator's terminal. Human output gets the text with every control sequence
 * removed and a note for each of these; `--json` keeps the exact bytes. Pure.
 */

/** One stream of output as kept, with what the human view must say about it. */
export interface OutputView {
  /** The text to print: decoded (U+FFFD for bytes that are not UTF-8), control sequences removed. */
  text: string;
  /** The kept bytes are UTF-8 (a sequence cut by the cap at the very end does not count against it). */
  utf8: boolean;
  /** Control sequences and control characters removed from `text`. */
  removed: number;
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
  const { text, removed } = stripControlSequences(decoded);
  return { text, utf8: isUtf8(bytes, truncated), removed };
}

/** What the human view says about one stream: cut, not UTF-8, control sequences removed. Empty when none applies. */
export function outputNotes(stream: 'stdout' | 'stderr', view: OutputView, kept: number, written: number): string[] {
  const notes: string[] = [];
  if (written > kept) notes.push(`${stream} was cut: the first ${kept} of ${written} bytes are kept`);
  if (!view.utf8) notes.push(`${stream} is not UTF-8: shown with U+FFFD for the bytes that are not (--json has them in base64)`);
  if (view.removed > 0) notes.push(`${stream}: ${view.removed} terminal control sequence(s) removed (--json has the exact bytes)`);
  return notes;
}
