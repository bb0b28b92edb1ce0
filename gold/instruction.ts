/**
 * The paths a task's instruction names as inputs to look at: "review
 * `/x/note.txt`", "Read the skill at `/app/skills/s/SKILL.md`", "Audit the
 * paths below:" followed by a list. A careful human lists them as read needs
 * even when the reference solution never opens them (it already knows what a
 * note says, or it stats a key instead of opening it): derive.ts rule 12.
 * Pure and deliberately narrow:
 * - the verb is an order: imperative, opening its clause ("records read go
 *   to `/x`" is not one), and it comes before the path in the same sentence
 *   ("Notes are in `/x`; read them" names a place); a writing verb between
 *   them ends its reach ("read `a`, then write `b`": `b` is an output);
 * - a sentence that ends with `:` carries a review verb into the list items
 *   right after it when the verb reaches its end or its object is the list
 *   ("Audit the paths below, fix them and write a report:");
 * - code blocks are commands and examples, never inputs;
 * - "use" and "ground in" are left out: AuthBench's specs do not read every
 *   input an instruction says to use (a request the tool never needs).
 */

/** Imperative forms only: "crashes while reading `/x`" describes, it does not ask. */
const REVIEW_VERB = /^(?:review|audit|inspect|examine|read|consult)$/i;
/** "Audit the paths below, fix them and write a report:" — the verb's object is the list, whatever follows it. */
const LIST_OBJECT = /\b(?:review|audit|inspect|examine|read|consult)\b(?:\s+[\w-]+){0,4}?\s+(?:below|following|listed)\b/i;
/** Words after which a verb still opens its clause ("… and then review `x`", "you must read `y`"). */
const CLAUSE_OPENER = /^(?:and|then|to|please|first|also|must|should|always|carefully)$/i;
/** Verbs that make what follows an output, ending a review verb's reach. */
const WRITE_VERB = /^(?:write|writing|save|saving|create|creating|produce|producing|generate|generating|put|place|store|output|emit)$/i;
const LIST_ITEM = /^\s*(?:[-*+]|\d+[.)])\s+/;
/** An absolute path at a word start or after a quote, bracket or backtick. */
const TOKEN = /(\/[\w./-]+)|([A-Za-z]+)/g;

function maskFences(text: string): string {
  return text.replace(/^[ \t]*(```+|~~~+)[^\n]*\n[\s\S]*?^[ \t]*\1[ \t]*$/gm, (block) => block.replace(/[^\n]/g, ' '));
}

function cleanPath(raw: string): string {
  return raw.replace(/[.,;:]+$/, '').replace(/\/+$/, '');
}

/**
 * Scan one sentence left to right: paths seen while a review verb reaches
 * them. `reaching` says whether a verb already reaches the start (a list item
 * after a review lead-in); the result says whether one reaches the end.
 */
function scan(sentence: string, reaching: boolean, out: string[]): boolean {
  let on = reaching;
  let previous: string | undefined;
  let lastEnd = 0;
  for (const m of sentence.matchAll(TOKEN)) {
    const [, path, word] = m;
    // An order opens a clause; "records read goes to `/x`" is a participle.
    const opensClause = previous === undefined || /[,;:(]/.test(sentence.slice(lastEnd, m.index)) || CLAUSE_OPENER.test(previous);
    previous = word ?? path;
    lastEnd = m.index + m[0].length;
    if (word !== undefined) {
      if (REVIEW_VERB.test(word) && opensClause) on = true;
      else if (WRITE_VERB.test(word)) on = false;
      continue;
    }
    // A path must start a token: not the tail of a URL (`http://h/x`) or of a relative path (`a/b`).
    const before = sentence[m.index - 1];
    if (path === undefined || (before !== undefined && !/[\s`('"[]/.test(before))) continue;
    const p = cleanPath(path);
    if (on && p.length > 1) out.push(p);
  }
  return on;
}

/** Absolute paths the instruction asks to be reviewed, audited, read or inspected, in order, each once. */
export function reviewedPaths(instruction: string): string[] {
  const out: string[] = [];
  const lines = maskFences(instruction.replace(/\r\n?/g, '\n')).split('\n');
  let leadIn = false;
  let prose: string[] = [];
  const flushProse = (): void => {
    if (prose.length === 0) return;
    const sentences = prose.join(' ').split(/(?<=[.!?])\s+/);
    leadIn = false;
    sentences.forEach((s, i) => {
      const reaches = scan(s, false, out);
      if (i === sentences.length - 1) leadIn = /:\s*$/.test(s) && (reaches || LIST_OBJECT.test(s));
    });
    prose = [];
  };
  for (const line of lines) {
    if (line.trim() === '') {
      flushProse();
      continue;
    }
    if (LIST_ITEM.test(line)) {
      flushProse();
      scan(line.replace(LIST_ITEM, ''), leadIn, out);
      continue;
    }
    // A prose line after a list ends the lead-in's reach.
    if (prose.length === 0) leadIn = false;
    prose.push(line.trim());
  }
  flushProse();
  return [...new Set(out)];
}
