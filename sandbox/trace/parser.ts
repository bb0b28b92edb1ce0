/**
 * Streaming parser for the output of `straceArgv` (strace -f -y -ttt ...).
 * Feed it chunks; it carries the partial last line over, joins
 * `<unfinished ...>` / `<... resumed>` pairs per pid, tracks each process's
 * cwd (inherited across fork, shared with CLONE_FS) so relative paths become
 * absolute, and turns every line into typed events. A line it cannot read
 * becomes an `unparsed` event with a reason: nothing is dropped silently.
 *
 * Conventions:
 * - An event is emitted when its call completes, so events are in completion
 *   order; `ts` is when the call was entered (the unfinished line's time).
 * - Calls still unfinished at end() (the process was killed inside them) are
 *   emitted then, with result null.
 * - A child's lines can precede the parent's `clone` result; an unknown pid
 *   inherits the cwd of the latest process with a fork-like call in flight.
 * - Traces without `-f` pid prefixes get pid 0; without `-ttt`, ts 0.
 * Pure: no I/O.
 */
import { TRACE_EVENT_SCHEMA_VERSION, type ProcessEvent, type TraceEvent, type UnparsedEvent } from './events.ts';
import { parseResult, splitArgs } from './syntax.ts';
import { CallShapeError, HANDLERS, normalizeAbsolute, type Call, type CallContext } from './syscalls.ts';

export interface StraceParserOptions {
  /** Working directory of the traced command when it started (absolute). */
  cwd: string;
}

interface Pending {
  ts: number;
  name: string;
  /** The line body up to ` <unfinished ...>`. */
  text: string;
}

interface CwdBox {
  dir: string;
}

const PID_PREFIX_RE = /^\[pid\s+(\d+)\]\s+/;
const UNFINISHED = ' <unfinished ...>';
const RESUMED_RE = /^<\.\.\. (\w+) resumed>\s?(.*)$/s;
const CALL_RE = /^(\w+)\(/;
const EXITED_RE = /^\+\+\+ exited with (-?\d+) \+\+\+$/;
const KILLED_RE = /^\+\+\+ killed by (SIG\w+)(?: \(core dumped\))? \+\+\+$/;
const SUPERSEDED_RE = /^\+\+\+ superseded by execve in pid (\d+) \+\+\+$/;
const SIGNAL_RE = /^--- (?:stopped by )?(SIG\w+)\b.*---$/;
const FORK_CALLS: ReadonlySet<string> = new Set(['clone', 'clone3', 'fork', 'vfork']);

export class StraceParser {
  readonly #initialCwd: string;
  #partial = '';
  readonly #decoder = new TextDecoder('utf-8');
  readonly #pending = new Map<number, Pending>();
  readonly #cwd = new Map<number, CwdBox>();
  readonly #parent = new Map<number, number>();
  /** Per pid: fd -> path of the open that returned it (shared with CLONE_FILES). */
  readonly #fds = new Map<number, Map<number, string>>();
  /** Pids whose exit_group we saw, so `+++ exited +++` does not count twice. */
  readonly #exited = new Set<number>();
  readonly #ctx: CallContext;

  constructor(options: StraceParserOptions) {
    if (!options.cwd.startsWith('/')) throw new RangeError(`StraceParser: cwd must be absolute, got ${options.cwd}`);
    this.#initialCwd = normalizeAbsolute(options.cwd);
    this.#ctx = {
      cwd: (pid) => this.#box(pid).dir,
      setCwd: (pid, dir) => {
        this.#box(pid).dir = dir;
      },
      forked: (parent, child, shares) => this.#forked(parent, child, shares),
      opened: (pid, fd, path) => this.#fdTable(pid).set(fd, path),
      openedPath: (pid, fd) => this.#fds.get(pid)?.get(fd),
      parentOf: (pid) => this.#parent.get(pid),
      exited: (pid) => this.#exited.add(pid),
    };
  }

  /** Feed the next chunk; returns the events of every line it completed. */
  push(chunk: string | Uint8Array): TraceEvent[] {
    const text = typeof chunk === 'string' ? chunk : this.#decoder.decode(chunk, { stream: true });
    const out: TraceEvent[] = [];
    const buffer = this.#partial + text;
    let start = 0;
    for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n', start)) {
      this.#line(buffer.slice(start, nl), out);
      start = nl + 1;
    }
    this.#partial = buffer.slice(start);
    return out;
  }

  /** The input is complete: parse a last unterminated line and flush calls that never resumed. */
  end(): TraceEvent[] {
    const out: TraceEvent[] = [];
    const rest = this.#partial + this.#decoder.decode();
    this.#partial = '';
    if (rest !== '') this.#line(rest, out);
    const left = [...this.#pending.entries()].sort((a, b) => a[1].ts - b[1].ts);
    for (const [pid] of left) this.#flushPending(pid, out);
    return out;
  }

  #box(pid: number): CwdBox {
    let box = this.#cwd.get(pid);
    if (box === undefined) {
      box = { dir: this.#forkerCwd() ?? this.#initialCwd };
      this.#cwd.set(pid, box);
    }
    return box;
  }

  /** cwd of the latest process with a fork-like call in flight: the likely parent of a pid not seen before. */
  #forkerCwd(): string | undefined {
    let best: { pid: number; ts: number } | undefined;
    for (const [pid, p] of this.#pending) {
      if (FORK_CALLS.has(p.name) && (best === undefined || p.ts >= best.ts)) best = { pid, ts: p.ts };
    }
    return best === undefined ? undefined : this.#cwd.get(best.pid)?.dir;
  }

  #fdTable(pid: number): Map<number, string> {
    let table = this.#fds.get(pid);
    if (table === undefined) {
      table = new Map();
      this.#fds.set(pid, table);
    }
    return table;
  }

  #forked(parent: number, child: number, shares: { fs: boolean; files: boolean }): void {
    this.#parent.set(child, parent);
    this.#exited.delete(child);
    const parentBox = this.#box(parent);
    if (shares.fs) this.#cwd.set(child, parentBox);
    else if (!this.#cwd.has(child)) this.#cwd.set(child, { dir: parentBox.dir });
    // Opens the child made before the parent's clone returned stay; the inherited ones come first.
    const parentFds = this.#fdTable(parent);
    if (shares.files) this.#fds.set(child, parentFds);
    else this.#fds.set(child, new Map([...parentFds, ...(this.#fds.get(child) ?? [])]));
  }

  #line(rawLine: string, out: TraceEvent[]): void {
    const line = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine;
    if (line.length === 0 || line.trim() === '') return;
    const { pid, ts, body } = splitPrefix(line);

    if (body.startsWith('+++ ') || body.startsWith('--- ')) {
      this.#statusLine(pid, ts, body, line, out);
      return;
    }
    if (body.startsWith('<... ')) {
      const r = RESUMED_RE.exec(body);
      const pending = this.#pending.get(pid);
      if (r === null) {
        out.push(unparsed(line, 'malformed resumed line', pid, ts));
      } else if (pending === undefined || pending.name !== r[1]) {
        out.push(unparsed(line, `resumed ${r[1]} without a matching unfinished call`, pid, ts));
      } else {
        this.#pending.delete(pid);
        this.#call(pid, pending.ts, pending.text + (r[2] ?? ''), line, out);
      }
      return;
    }
    if (body.endsWith(UNFINISHED)) {
      const name = CALL_RE.exec(body)?.[1];
      if (name === undefined) {
        out.push(unparsed(line, 'malformed unfinished line', pid, ts));
        return;
      }
      if (this.#pending.has(pid)) this.#flushPending(pid, out);
      this.#pending.set(pid, { ts, name, text: body.slice(0, -UNFINISHED.length) });
      return;
    }
    this.#call(pid, ts, body, line, out);
  }

  #statusLine(pid: number, ts: number, body: string, line: string, out: TraceEvent[]): void {
    const head = { kind: 'process' as const, schema_version: TRACE_EVENT_SCHEMA_VERSION, pid, ts };
    const parent = this.#parent.get(pid);
    const withParent = parent === undefined ? {} : { parent };
    const exited = EXITED_RE.exec(body);
    const killed = exited === null ? KILLED_RE.exec(body) : null;
    if (exited !== null || killed !== null) {
      // A call in flight when the process ended never resumes.
      this.#flushPending(pid, out);
      const already = this.#exited.delete(pid);
      if (exited !== null && !already) {
        out.push({ ...head, op: 'exit', exit_code: Number(exited[1]), ...withParent } satisfies ProcessEvent);
      } else if (killed !== null) {
        out.push({ ...head, op: 'exit', signal: killed[1] ?? '', ...withParent } satisfies ProcessEvent);
      }
      return;
    }
    const superseded = SUPERSEDED_RE.exec(body);
    if (superseded !== null) {
      // A non-leader thread exec'd: its unfinished execve resumes under the leader's pid.
      const from = Number(superseded[1]);
      const pending = this.#pending.get(from);
      if (pending !== undefined) {
        this.#pending.delete(from);
        this.#pending.set(pid, pending);
      }
      return;
    }
    const signal = SIGNAL_RE.exec(body);
    if (signal !== null) {
      out.push({ ...head, op: 'signal', signal: signal[1] ?? '', ...withParent } satisfies ProcessEvent);
      return;
    }
    out.push(unparsed(line, 'unknown status line', pid, ts));
  }

  #flushPending(pid: number, out: TraceEvent[]): void {
    const pending = this.#pending.get(pid);
    if (pending === undefined) return;
    this.#pending.delete(pid);
    this.#call(pid, pending.ts, `${pending.text}) = ?`, `${pending.text}${UNFINISHED}`, out);
  }

  #call(pid: number, ts: number, body: string, line: string, out: TraceEvent[]): void {
    const name = CALL_RE.exec(body)?.[1];
    if (name === undefined) {
      out.push(unparsed(line, 'not a syscall line', pid, ts));
      return;
    }
    const handler = HANDLERS[name];
    if (handler === undefined) {
      out.push(unparsed(line, `syscall ${name} is not one authbench traces`, pid, ts));
      return;
    }
    const { args, end } = splitArgs(body, name.length + 1);
    if (end < 0) {
      out.push(unparsed(line, 'unbalanced argument list', pid, ts));
      return;
    }
    const result = parseResult(body.slice(end + 1));
    if (result === undefined) {
      out.push(unparsed(line, 'no result', pid, ts));
      return;
    }
    const call: Call = { pid, ts, name, args, result };
    try {
      const event = handler(call, this.#ctx);
      if (Array.isArray(event)) out.push(...(event as readonly TraceEvent[]));
      else if (event !== undefined) out.push(event as TraceEvent);
    } catch (error) {
      if (!(error instanceof CallShapeError)) throw error;
      out.push(unparsed(line, error.message, pid, ts));
    }
  }
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function skipSpaces(line: string, i: number): number {
  while (line.charCodeAt(i) === 32) i++;
  return i;
}

/**
 * `PID  TS body`, `[pid PID] TS body`, `TS body` or `body`. Hand-rolled:
 * this runs on every line and a regex capturing the body was measurable.
 */
function splitPrefix(line: string): { pid: number; ts: number; body: string } {
  let pid = 0;
  let i = 0;
  const bracket = line.charCodeAt(0) === 91 ? PID_PREFIX_RE.exec(line) : null;
  if (bracket !== null) {
    pid = Number(bracket[1]);
    i = bracket[0].length;
  } else {
    let j = 0;
    while (isDigit(line.charCodeAt(j))) j++;
    if (j > 0 && line.charCodeAt(j) === 32) {
      pid = Number(line.slice(0, j));
      i = skipSpaces(line, j);
    }
  }
  let j = i;
  while (isDigit(line.charCodeAt(j))) j++;
  if (j > i && line.charCodeAt(j) === 46 /* . */) {
    let k = j + 1;
    while (isDigit(line.charCodeAt(k))) k++;
    if (k > j + 1 && line.charCodeAt(k) === 32) {
      return { pid, ts: Number(line.slice(i, k)), body: line.slice(skipSpaces(line, k)) };
    }
  }
  return { pid, ts: 0, body: line.slice(i) };
}

function unparsed(raw: string, reason: string, pid: number, ts: number): UnparsedEvent {
  return { kind: 'unparsed', schema_version: TRACE_EVENT_SCHEMA_VERSION, pid, ts, raw, reason };
}

/** Parse a whole trace at once. */
export function parseStrace(text: string, options: StraceParserOptions): TraceEvent[] {
  const parser = new StraceParser(options);
  return [...parser.push(text), ...parser.end()];
}
