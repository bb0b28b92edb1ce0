/**
 * Per-test results from a JUnit XML report (pytest's `--junitxml`). Pure and
 * forgiving: the file may be cut short (a validator killed at its timeout) or
 * carry text the agent's files put into failure messages, so this never
 * throws; it returns what it could read and says what it could not.
 *
 * No XML library: the repository has none, and the subset JUnit uses (elements,
 * attributes, text, CDATA, comments, the five entities and character
 * references) is small enough that a scanner is easier to audit than a new
 * dependency. Only `<testcase>` elements and their direct `<failure>`,
 * `<error>` and `<skipped>` children matter.
 */

export type TestOutcome = 'passed' | 'failed' | 'error' | 'skipped';

export interface TestResult {
  /** `classname::name` as pytest reports them (e.g. `test_outputs::test_keys`). */
  id: string;
  outcome: TestOutcome;
  /** The failure/error/skip message (its `message` attribute, else its text), cut at MESSAGE_CHARS. */
  message?: string;
}

export interface JunitReport {
  tests: TestResult[];
  /** Why the file could not be read completely; empty for a well-formed report. */
  problems: string[];
}

export const MESSAGE_CHARS = 2000;

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);/g, (whole, ref: string) => {
    if (ref.startsWith('#')) {
      const code = ref[1] === 'x' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return Number.isFinite(code) && code >= 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[ref] ?? whole;
  });
}

/** The end of a tag starting at `from` (the index of its `>`), skipping `>` inside quoted attribute values; -1 if none. */
function tagEnd(xml: string, from: number): number {
  let quote: string | undefined;
  for (let i = from; i < xml.length; i++) {
    const c = xml[i];
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '>') {
      return i;
    }
  }
  return -1;
}

function parseAttributes(text: string): Record<string, string> {
  const attrs: Record<string, string> = {};
  for (const m of text.matchAll(/([^\s=/>]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
    const name = m[1];
    if (name !== undefined) attrs[name] = decodeEntities(m[2] ?? m[3] ?? '');
  }
  return attrs;
}

function clip(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > MESSAGE_CHARS ? `${trimmed.slice(0, MESSAGE_CHARS)}…` : trimmed;
}

const RANK: Record<TestOutcome, number> = { passed: 0, skipped: 1, error: 2, failed: 3 };
const OUTCOME_OF: Record<string, TestOutcome> = { failure: 'failed', error: 'error', skipped: 'skipped' };

interface OpenCase {
  id: string;
  outcome: TestOutcome;
  message?: string;
  depth: number;
}

interface OpenDetail {
  element: string;
  outcome: TestOutcome;
  hasMessage: boolean;
  text: string;
}

export function parseJunit(xml: string): JunitReport {
  const tests: TestResult[] = [];
  const problems: string[] = [];
  let depth = 0;
  let sawSuite = false;
  let current: OpenCase | undefined;
  let detail: OpenDetail | undefined;

  const finishDetail = (): void => {
    if (current === undefined || detail === undefined) return;
    if (RANK[detail.outcome] >= RANK[current.outcome]) {
      current.outcome = detail.outcome;
      const message = detail.hasMessage ? current.message : clip(detail.text);
      if (message !== undefined && message !== '') current.message = message;
      else delete current.message;
    }
    detail = undefined;
  };
  const finishCase = (): void => {
    if (current === undefined) return;
    finishDetail();
    tests.push({ id: current.id, outcome: current.outcome, ...(current.message === undefined ? {} : { message: current.message }) });
    current = undefined;
  };
  const text = (t: string): void => {
    if (detail !== undefined && !detail.hasMessage && detail.text.length < MESSAGE_CHARS * 2) detail.text += t;
  };

  let i = 0;
  while (i < xml.length) {
    const lt = xml.indexOf('<', i);
    if (lt < 0) {
      text(decodeEntities(xml.slice(i)));
      break;
    }
    if (lt > i) text(decodeEntities(xml.slice(i, lt)));
    if (xml.startsWith('<!--', lt)) {
      const end = xml.indexOf('-->', lt + 4);
      if (end < 0) {
        problems.push('unterminated comment');
        break;
      }
      i = end + 3;
      continue;
    }
    if (xml.startsWith('<![CDATA[', lt)) {
      const end = xml.indexOf(']]>', lt + 9);
      if (end < 0) {
        problems.push('unterminated CDATA section');
        text(xml.slice(lt + 9));
        break;
      }
      text(xml.slice(lt + 9, end));
      i = end + 3;
      continue;
    }
    if (xml.startsWith('<?', lt)) {
      const end = xml.indexOf('?>', lt + 2);
      if (end < 0) {
        problems.push('unterminated processing instruction');
        break;
      }
      i = end + 2;
      continue;
    }
    if (xml.startsWith('<!', lt)) {
      // DOCTYPE (with an internal subset in brackets) or another declaration: skipped.
      const bracket = xml.indexOf('[', lt);
      const close = xml.indexOf('>', lt);
      const end = bracket >= 0 && close >= 0 && bracket < close ? xml.indexOf(']>', bracket) + 1 : close;
      if (end <= 0) {
        problems.push('unterminated declaration');
        break;
      }
      i = end + 1;
      continue;
    }
    const gt = tagEnd(xml, lt + 1);
    if (gt < 0) {
      problems.push(`unterminated tag at offset ${lt} (file cut short?)`);
      break;
    }
    const body = xml.slice(lt + 1, gt);
    i = gt + 1;
    if (body.startsWith('/')) {
      const name = body.slice(1).trim();
      depth = Math.max(0, depth - 1);
      if (name === 'testcase' && current !== undefined) finishCase();
      else if (detail !== undefined && name === detail.element) finishDetail();
      continue;
    }
    const selfClosing = body.endsWith('/');
    const inner = selfClosing ? body.slice(0, -1) : body;
    const name = /^[^\s/>]+/.exec(inner)?.[0] ?? '';
    if (name === '') {
      problems.push(`malformed tag at offset ${lt}`);
      continue;
    }
    const attrs = parseAttributes(inner.slice(name.length));
    if (name === 'testsuite' || name === 'testsuites') sawSuite = true;
    if (name === 'testcase') {
      // A testcase never nests; an unclosed one ends where the next begins.
      if (current !== undefined) {
        problems.push(`testcase ${current.id} not closed`);
        finishCase();
      }
      const cls = attrs['classname'] ?? '';
      const caseName = attrs['name'] ?? '';
      const id = cls !== '' && caseName !== '' ? `${cls}::${caseName}` : caseName !== '' ? caseName : cls !== '' ? cls : '(unnamed)';
      current = { id, outcome: 'passed', depth };
      if (selfClosing) finishCase();
    } else if (current !== undefined && depth === current.depth + 1 && OUTCOME_OF[name] !== undefined) {
      finishDetail();
      const outcome = OUTCOME_OF[name] ?? 'error';
      const message = attrs['message'];
      detail = { element: name, outcome, hasMessage: message !== undefined && message.trim() !== '', text: '' };
      if (detail.hasMessage && RANK[outcome] >= RANK[current.outcome]) current.message = clip(message ?? '');
      if (selfClosing) finishDetail();
    }
    if (!selfClosing) depth++;
  }
  if (current !== undefined) {
    problems.push(`testcase ${current.id} not closed (file cut short?)`);
    finishCase();
  }
  if (!sawSuite) problems.push('no <testsuite> element: not a JUnit report');
  return { tests, problems };
}

/** Counts per outcome. */
export function summarizeTests(tests: readonly TestResult[]): Record<TestOutcome, number> & { total: number } {
  const counts = { total: tests.length, passed: 0, failed: 0, error: 0, skipped: 0 };
  for (const t of tests) counts[t.outcome]++;
  return counts;
}
