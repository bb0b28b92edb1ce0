/**
 * Where strict JSON parsing fails, as line and column. V8's JSON.parse
 * messages give an offset for some errors and only a snippet for others, and
 * a policy diagnostic must point at the spot; this small strict scanner runs
 * only after JSON.parse has already failed.
 */

class StopAt extends Error {
  readonly offset: number;
  constructor(offset: number) {
    super(`JSON error at ${offset}`);
    this.offset = offset;
  }
}

const LITERAL = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;

/** Offset of the first character strict JSON rejects (text.length for an early end), or undefined when valid. */
export function jsonErrorOffset(text: string): number | undefined {
  let i = 0;
  const fail = (): never => {
    throw new StopAt(i);
  };
  const ws = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text.charAt(i))) i++;
  };
  const string = (): void => {
    i++;
    while (i < text.length) {
      const c = text.charAt(i);
      if (c === '"') {
        i++;
        return;
      }
      if (c === '\\') i += 2;
      else if (c < ' ') fail();
      else i++;
    }
    fail();
  };
  const value = (): void => {
    ws();
    const c = text.charAt(i);
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      i++;
      ws();
      if (text.charAt(i) === close) {
        i++;
        return;
      }
      for (;;) {
        if (c === '{') {
          ws();
          if (text.charAt(i) !== '"') fail();
          string();
          ws();
          if (text.charAt(i) !== ':') fail();
          i++;
        }
        value();
        ws();
        if (text.charAt(i) === ',') i++;
        else if (text.charAt(i) === close) {
          i++;
          return;
        } else fail();
      }
    }
    if (c === '"') return string();
    LITERAL.lastIndex = i;
    const m = LITERAL.exec(text);
    if (m === null) fail();
    else i += m[0].length;
  };
  try {
    value();
    ws();
    if (i < text.length) fail();
    return undefined;
  } catch (e) {
    if (e instanceof StopAt) return e.offset;
    throw e;
  }
}

export function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, column: (before.at(-1)?.length ?? 0) + 1 };
}
