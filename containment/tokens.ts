/**
 * Token provenance: which targets a proposed command names (paths, hosts,
 * URLs, recipients, key=value arguments) and where each could have come from —
 * the trusted instruction, untrusted observations the model saw, both or
 * neither. A target that only untrusted content mentions is how injected
 * instructions show up in an action. Pure.
 */
import { parseShell, resolvePath, type SimpleCommand } from './shell.ts';
import type { CommandToken, TokenKind, TokenProvenance } from './schema.ts';

export interface ProvenanceSources {
  /** The trusted instruction (instruction.md). */
  instruction: string;
  /** Text of every tainted observation the model saw before the proposal. */
  taintedObservations: readonly string[];
}

const TLDS = new Set(['com', 'org', 'net', 'io', 'dev', 'ai', 'co', 'gov', 'edu', 'info', 'biz', 'local', 'internal', 'example', 'test', 'invalid', 'localhost', 'corp', 'lan', 'app', 'cloud', 'xyz', 'me', 'us', 'uk', 'de']);
const URL_RE = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s]+$/;
const EMAIL_RE = /^(?:mailto:)?[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+$/;
const IPV4_RE = /^\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?$/;
const HOST_RE = /^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*(?::\d+)?$/;
const ASSIGN_RE = /^-{0,2}([A-Za-z_][A-Za-z0-9_.-]*)=(.+)$/s;
const FILE_NAME_RE = /^[\w.@%+-]*[\w@%+-]\.[A-Za-z0-9]{1,8}$/;
const FREE_TEXT = /[\s{}[\],;"'<>]/;

// Scanning free text (heredoc bodies, JSON payloads, script arguments).
const SCAN_URL = /[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s'"<>()[\]{}`]+/g;
const SCAN_EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+/g;
const SCAN_IPV4 = /(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?(?![\w.])/g;
const SCAN_PATH = /(?<![\w.~/:$-])\/(?:[\w.@%+=,-]+\/?)+/g;
// A value that opens a call (`data=open(...)`) is code, not a target.
const SCAN_ASSIGN = /(?<![\w.-])[A-Za-z_][A-Za-z0-9_.-]*=[^\s'"`;&|,(){}[\]]+(?![^\s'"`;&|,(){}[\]]|\()/g;

/** Classify one word; `cwd` resolves relative paths. */
export function wordTokens(word: string, cwd: string | undefined): CommandToken[] {
  if (word === '' || word === '-' || word === '--') return [];
  if (FREE_TEXT.test(word)) return scanText(word, cwd);
  const assign = ASSIGN_RE.exec(word);
  if (assign !== null && !word.includes('://')) {
    const value = assign[2] ?? '';
    return [{ kind: 'assignment', text: word.replace(/^-+/, ''), resolved: value }, ...wordTokens(value, cwd)];
  }
  if (word.startsWith('-')) return [];
  // `curl -d @file`: the word names a file.
  if (word.startsWith('@') && word.length > 1 && !word.slice(1).includes('@')) return wordTokens(word.slice(1), cwd);
  if (URL_RE.test(word)) {
    const host = urlHost(word);
    return [{ kind: 'url', text: word }, ...(host === undefined ? [] : [{ kind: 'host' as const, text: host }])];
  }
  if (EMAIL_RE.test(word)) return [{ kind: 'email', text: word.replace(/^mailto:/, '') }];
  if (IPV4_RE.test(word) || /^localhost(?::\d+)?$/.test(word)) return [{ kind: 'host', text: word }];
  if (word.includes('/') || word.startsWith('.')) return [pathToken(word, cwd)];
  if (HOST_RE.test(word) && word.includes('.') && TLDS.has(hostTld(word))) return [{ kind: 'host', text: word }];
  if (FILE_NAME_RE.test(word)) return [pathToken(word, cwd)];
  return [];
}

function pathToken(text: string, cwd: string | undefined): CommandToken {
  const resolved = resolvePath(text, cwd);
  return resolved === undefined || resolved === text ? { kind: 'path', text } : { kind: 'path', text, resolved };
}

function hostTld(host: string): string {
  return (host.split(':')[0] ?? '').split('.').at(-1)?.toLowerCase() ?? '';
}

function urlHost(url: string): string | undefined {
  try {
    const u = new URL(url);
    return u.hostname === '' ? undefined : u.host;
  } catch {
    return undefined;
  }
}

/** Tokens in free text: URLs (and their hosts), emails, IPs, absolute paths, key=value pairs. */
export function scanText(text: string, cwd: string | undefined): CommandToken[] {
  const out: CommandToken[] = [];
  let rest = text;
  for (const m of text.matchAll(SCAN_URL)) {
    out.push(...wordTokens(m[0], cwd));
    rest = rest.replace(m[0], ' ');
  }
  for (const m of rest.matchAll(SCAN_EMAIL)) out.push({ kind: 'email', text: m[0] });
  const noEmail = rest.replace(SCAN_EMAIL, ' ');
  for (const m of noEmail.matchAll(SCAN_IPV4)) out.push({ kind: 'host', text: m[0] });
  for (const m of noEmail.matchAll(SCAN_PATH)) out.push(pathToken(m[0], cwd));
  for (const m of noEmail.matchAll(SCAN_ASSIGN)) {
    const [key = '', ...value] = m[0].split('=');
    if (key !== '') out.push({ kind: 'assignment', text: m[0], resolved: value.join('=') });
  }
  return out;
}

/** Every target token a command line names, deduplicated, in order of appearance. */
export function extractTokens(command: string, cwd?: string): CommandToken[] {
  const tokens: CommandToken[] = [];
  for (const cmd of parseShell(command, cwd)) tokens.push(...commandTokens(cmd));
  const seen = new Set<string>();
  return tokens.filter((t) => {
    const key = `${t.kind}\0${t.text}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

const PATTERN_FIRST: ReadonlySet<string> = new Set(['sed', 'awk', 'gawk', 'mawk', 'grep', 'egrep', 'fgrep', 'rg', 'jq']);
const FD_TARGET = /^(?:\d+|-|\/dev\/(?:null|stdout|stderr|stdin|tty|fd\/\d+))$/;

function commandTokens(cmd: SimpleCommand): CommandToken[] {
  const out: CommandToken[] = [];
  for (const a of cmd.assignments) out.push(...wordTokens(a, cmd.cwd));
  const [program, ...args] = cmd.words;
  // The program name is a target only when it is a path (./upload.sh).
  if (program !== undefined && program.includes('/')) out.push(pathToken(program, cmd.cwd));
  // A pattern or script argument (`s/a/b/`, `/foo/ {print}`) is text, not a path.
  const script = PATTERN_FIRST.has(program?.split('/').at(-1) ?? '') ? args.findIndex((a) => !a.startsWith('-')) : -1;
  args.forEach((arg, i) => out.push(...(i === script ? scanText(arg, cmd.cwd) : wordTokens(arg, cmd.cwd))));
  for (const r of cmd.redirects) {
    if (r.body !== undefined) out.push(...scanText(r.body, cmd.cwd));
    else if (r.op === '<<<') out.push(...scanText(r.target, cmd.cwd));
    else if (!FD_TARGET.test(r.target)) out.push(pathToken(r.target, cmd.cwd));
  }
  return out;
}

const HOST_LIKE: ReadonlySet<TokenKind> = new Set(['host', 'email']);

/**
 * Does `needle` occur in `haystack` as a whole token (not inside a longer path
 * or word)? A host may sit inside a URL or after `user@`, so for host-like
 * tokens `/`, `@` and `:` are boundaries; and they compare without case.
 */
export function occursAsToken(needle: string, haystack: string, hostLike = false): boolean {
  if (needle === '') return false;
  const h = hostLike ? haystack.toLowerCase() : haystack;
  const n = hostLike ? needle.toLowerCase() : needle;
  const inside = hostLike ? /[\w.-]/ : /[\w./@-]/;
  const insideAfter = hostLike ? /[\w-]/ : /[\w/@-]/;
  for (let at = h.indexOf(n); at !== -1; at = h.indexOf(n, at + 1)) {
    const before = h[at - 1] ?? ' ';
    const after = h[at + n.length] ?? ' ';
    const afterNext = h[at + n.length + 1] ?? ' ';
    // A sentence-ending period is not part of the token; `.bak` is.
    if (!inside.test(before) && !insideAfter.test(after) && !(after === '.' && /\w/.test(afterNext))) return true;
  }
  return false;
}

function occursIn(token: CommandToken, text: string): boolean {
  const hostLike = HOST_LIKE.has(token.kind);
  const candidates = [token.text, token.resolved].filter((c): c is string => c !== undefined && c !== '');
  return candidates.some((c) => occursAsToken(c, text, hostLike) || (c.length > 1 && c.endsWith('/') && occursAsToken(c.slice(0, -1), text)));
}

/** Where each token of `command` occurs: trusted instruction, tainted observations, both or neither. */
export function tokenProvenance(command: string, sources: ProvenanceSources, cwd?: string): TokenProvenance[] {
  return extractTokens(command, cwd).map((t) => ({
    ...t,
    in_instruction: occursIn(t, sources.instruction),
    in_tainted_observation: sources.taintedObservations.some((o) => occursIn(t, o)),
  }));
}

/** Tokens that tainted observations supplied and the trusted instruction did not. */
export function taintedTokens(provenance: readonly TokenProvenance[]): string[] {
  return provenance.filter((t) => t.in_tainted_observation && !t.in_instruction).map((t) => t.text);
}
