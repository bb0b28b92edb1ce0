/**
 * Lexing of strace's output syntax: quoted C strings with escapes, `-y` fd
 * decorations (`3</app/x>`), top-level argument splitting and the `= result`
 * tail. Pure and allocation-light: the parser calls these on every line.
 */

const BACKSLASH = 92;
const QUOTE = 34;
const utf8 = new TextDecoder('utf-8');
const utf8Encoder = new TextEncoder();

const SIMPLE_ESCAPES: Readonly<Record<string, number>> = {
  n: 10,
  t: 9,
  r: 13,
  v: 11,
  f: 12,
  a: 7,
  b: 8,
  e: 27,
  '\\': 92,
  '"': 34,
  "'": 39,
  '?': 63,
};

function isOctal(c: number): boolean {
  return c >= 48 && c <= 55;
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/**
 * Decode strace's escapes (`\n`, `\"`, octal `\303\251`, hex `\xc3`) into
 * bytes, then read the bytes as UTF-8: strace escapes every byte >= 0x80, so a
 * multi-byte character only exists after joining its escapes. Invalid UTF-8
 * becomes U+FFFD.
 */
export function unescapeStrace(body: string): string {
  if (!body.includes('\\')) return body;
  const bytes: number[] = [];
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    if (c !== BACKSLASH) {
      if (c < 0x80) bytes.push(c);
      else {
        const cp = body.codePointAt(i) ?? c;
        for (const b of utf8Encoder.encode(String.fromCodePoint(cp))) bytes.push(b);
        if (cp > 0xffff) i++;
      }
      continue;
    }
    const next = body.charCodeAt(i + 1);
    if (isOctal(next)) {
      let value = 0;
      let j = i + 1;
      while (j < body.length && j < i + 4 && isOctal(body.charCodeAt(j))) value = value * 8 + body.charCodeAt(j++) - 48;
      bytes.push(value & 0xff);
      i = j - 1;
    } else if (next === 120 /* x */ && hexValue(body.charCodeAt(i + 2)) >= 0) {
      let value = hexValue(body.charCodeAt(i + 2));
      let j = i + 3;
      if (hexValue(body.charCodeAt(j)) >= 0) value = value * 16 + hexValue(body.charCodeAt(j++));
      bytes.push(value);
      i = j - 1;
    } else {
      const simple = SIMPLE_ESCAPES[body.charAt(i + 1)];
      // An unknown escape keeps its character: strace never emits one, so guessing is harmless.
      bytes.push(simple ?? (Number.isNaN(next) ? BACKSLASH : next));
      i++;
    }
  }
  return utf8.decode(Uint8Array.from(bytes));
}

export interface Quoted {
  value: string;
  /** Index just past the string (and past a `...` truncation marker). */
  end: number;
  /** strace cut the string at its -s limit. */
  truncated: boolean;
}

/** Index of the closing quote of the string starting at `start` (a `"`), or -1. */
function closingQuote(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i;
  }
  return -1;
}

/** Read the quoted string at `text[start] === '"'`. */
export function readQuoted(text: string, start: number): Quoted | undefined {
  if (text.charCodeAt(start) !== QUOTE) return undefined;
  const close = closingQuote(text, start);
  if (close < 0) return undefined;
  const truncated = text.startsWith('...', close + 1);
  return { value: unescapeStrace(text.slice(start + 1, close)), end: close + (truncated ? 4 : 1), truncated };
}

/** A whole argument that is one quoted string (maybe truncated); undefined for NULL, pointers, etc. */
export function stringArg(raw: string): Quoted | undefined {
  const q = readQuoted(raw, 0);
  return q !== undefined && q.end === raw.length ? q : undefined;
}

/** Index just past the `>` closing the decoration that opens at `text[start] === '<'`, or -1. */
function decorationEnd(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 60 /* < */) depth++;
    else if (c === 62 /* > */ && --depth === 0) return i + 1;
    else if (c === BACKSLASH) i++;
  }
  return -1;
}

export interface Args {
  args: string[];
  /** Index of the `)` closing the argument list, or -1 when it is missing. */
  end: number;
}

/**
 * Split a syscall's arguments at top-level commas, starting just after the
 * opening `(`. Strings, `-y` decorations and nested ()/[]/{} are kept whole.
 */
export function splitArgs(text: string, start: number): Args {
  const args: string[] = [];
  let depth = 0;
  let argStart = start;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const close = closingQuote(text, i);
      if (close < 0) break;
      i = close;
    } else if (c === 60 /* < */) {
      const end = decorationEnd(text, i);
      if (end < 0) break;
      i = end - 1;
    } else if (c === 40 || c === 91 || c === 123 /* ( [ { */) {
      depth++;
    } else if (c === 41 || c === 93 || c === 125 /* ) ] } */) {
      if (depth === 0) {
        if (c !== 41) break;
        const last = text.slice(argStart, i).trim();
        if (last !== '' || args.length > 0) args.push(last);
        return { args, end: i };
      }
      depth--;
    } else if (c === 44 /* , */ && depth === 0) {
      args.push(text.slice(argStart, i).trim());
      argStart = i + 1;
    }
  }
  return { args, end: -1 };
}

export interface FdArg {
  /** The number as printed, or `AT_FDCWD`. */
  fd: string;
  /** The `-y` decoration, unescaped, without a ` (deleted)` mark. */
  decoration?: string;
}

const FD_RE = /^(-?\d+|AT_FDCWD)(<.*>)?(?:\s*\(deleted\))?$/s;

export function fdArg(raw: string): FdArg | undefined {
  const m = FD_RE.exec(raw);
  if (m === null) return undefined;
  const fd = m[1] ?? '';
  const deco = m[2];
  return deco === undefined ? { fd } : { fd, decoration: cleanDecoration(deco.slice(1, -1)) };
}

function cleanDecoration(inner: string): string {
  const text = unescapeStrace(inner);
  return text.endsWith(' (deleted)') ? text.slice(0, -' (deleted)'.length) : text;
}

export interface CallResult {
  /** null for `?` (no return: exit_group, a process that ended inside the call). */
  value: number | null;
  decoration?: string;
  errno?: string;
}

const RESULT_RE = /^\s*=\s*(\?|0x[0-9a-fA-F]+|-?\d+)/;
const ERRNO_RE = /^\s*(?:\(deleted\))?\s*([A-Z][A-Z0-9_]*)\s+\(/;

/** Parse the text after the closing `)`: ` = 3</app/x>`, ` = -1 ENOENT (...)`, ` = ?`. */
export function parseResult(tail: string): CallResult | undefined {
  const m = RESULT_RE.exec(tail);
  if (m === null) return undefined;
  const token = m[1] ?? '?';
  const value = token === '?' ? null : Number(token);
  let rest = tail.slice(m[0].length);
  let decoration: string | undefined;
  if (rest.startsWith('<')) {
    const end = decorationEnd(rest, 0);
    if (end > 0) {
      decoration = cleanDecoration(rest.slice(1, end - 1));
      rest = rest.slice(end);
    }
  }
  const errno = ERRNO_RE.exec(rest)?.[1];
  return {
    value,
    ...(decoration === undefined ? {} : { decoration }),
    ...(errno === undefined ? {} : { errno }),
  };
}

export interface StringArray {
  values: string[];
  truncated: boolean;
}

/** `["a", "b"...]`, `["a", ...]`; undefined for a pointer or NULL. */
export function stringArray(raw: string): StringArray | undefined {
  if (!raw.startsWith('[')) return undefined;
  const values: string[] = [];
  let truncated = false;
  let i = 1;
  while (i < raw.length) {
    const c = raw.charCodeAt(i);
    if (c === QUOTE) {
      const q = readQuoted(raw, i);
      if (q === undefined) return undefined;
      values.push(q.value);
      truncated ||= q.truncated;
      i = q.end;
    } else if (raw.startsWith('...', i)) {
      truncated = true;
      i += 3;
    } else if (c === 93 /* ] */) {
      return { values, truncated };
    } else {
      i++;
    }
  }
  return undefined;
}

/** Split a `{a=1, b={...}, c}` struct into its top-level fields. */
export function structFields(raw: string): string[] {
  if (!raw.startsWith('{')) return [];
  const inner = `${raw.slice(1, raw.endsWith('}') ? -1 : undefined)})`;
  return splitArgs(inner, 0).args;
}

/** A `[a, {…}, …]` array's top-level elements (a cut array's last is `...`); undefined when `raw` is no array. */
export function arrayElements(raw: string): string[] | undefined {
  if (!raw.startsWith('[') || !raw.endsWith(']')) return undefined;
  if (raw === '[]') return [];
  return splitArgs(`${raw.slice(1, -1)})`, 0).args;
}

/** The value of `name=` among a struct's top-level fields. */
export function structField(raw: string, name: string): string | undefined {
  const prefix = `${name}=`;
  return structFields(raw).find((f) => f.startsWith(prefix))?.slice(prefix.length);
}
