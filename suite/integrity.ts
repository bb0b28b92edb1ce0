/**
 * `authbench tasks integrity`: a scenario may only carry synthetic markers and
 * local sinks. Every canary must look synthetic, every sink must be inside the
 * container, no file may hold something that looks like a real credential or
 * a real network endpoint, and injected content must be plain text (no hidden
 * characters, encodings or markup that hides it from a reader). Pure: the
 * caller reads the files.
 */
import type { ResolvedAuthbench } from '../task-format/index.ts';

export const INTEGRITY_RULES = ['canary-format', 'sink-local', 'network', 'credential', 'endpoint', 'stealth', 'encoding', 'secret-file'] as const;
export type IntegrityRule = (typeof INTEGRITY_RULES)[number];

export interface IntegrityFinding {
  rule: IntegrityRule;
  /** Task-relative file, or task.toml for configuration findings. */
  file: string;
  detail: string;
}

export const SYNTHETIC_CANARY = /^AUTHBENCH_CANARY_[0-9a-f]{16}$/;

const CREDENTIALS: readonly { name: string; re: RegExp }[] = [
  { name: 'AWS access key id', re: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/ },
  { name: 'private key block', re: /-----BEGIN [A-Z ]*PRIVATE KEY-----/ },
  { name: 'GitHub token', re: /\bgh[pousr]_[A-Za-z0-9]{36,}\b/ },
  { name: 'Slack token', re: /\bxox[abprs]-[A-Za-z0-9-]{10,}/ },
  { name: 'OpenAI-style API key', re: /\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}/ },
  { name: 'Anthropic API key', re: /\bsk-ant-[A-Za-z0-9_-]{20,}/ },
  { name: 'Google API key', re: /\bAIza[0-9A-Za-z_-]{35}\b/ },
  { name: 'Stripe live key', re: /\b[rs]k_live_[0-9a-zA-Z]{20,}/ },
  { name: 'JSON web token', re: /\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/ },
];

/** Hosts a scenario may name: loopback and the names reserved for documentation and testing (RFC 2606 / 6761). */
export function isReservedHost(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  if (['localhost', '127.0.0.1', '::1', '0.0.0.0'].includes(h) || h.startsWith('127.')) return true;
  return /(^|\.)(example\.(com|org|net)|example|test|invalid|localhost)$/.test(h);
}

const URL_RE = /\b(?:https?|ftp|wss?):\/\/([A-Za-z0-9.-]+|\[[0-9a-fA-F:]+\])(?::\d+)?/g;
const EMAIL_RE = /\b[A-Za-z0-9._%+-]+@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)\b/g;
// Zero-width, bidirectional controls and other invisible format characters.
const INVISIBLE = /[\u00AD\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/;
// C0 controls other than tab/newline/carriage return, and ESC (terminal escape sequences).
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;
const BASE64_RUN = /[A-Za-z0-9+/]{64,}={0,2}/;
const HIDDEN_MARKUP = /<!--[\s\S]*?-->/;
const DECODE_PIPES = /\b(?:base64\s+(?:-d|--decode)|xxd\s+-r|openssl\s+enc\s+-d)\b/;

/** Findings for one text file of a task. */
export function scanText(file: string, text: string, untrusted: boolean): IntegrityFinding[] {
  const out: IntegrityFinding[] = [];
  for (const { name, re } of CREDENTIALS) if (re.test(text)) out.push({ rule: 'credential', file, detail: `looks like a real ${name}` });
  for (const m of text.matchAll(URL_RE)) {
    const host = (m[1] ?? '').replace(/^\[|\]$/g, '');
    // A single-label name (`http://x/`) cannot name a host on the internet.
    if (!host.includes('.') && !host.includes(':')) continue;
    if (!isReservedHost(host)) out.push({ rule: 'endpoint', file, detail: `URL to a non-reserved host ${host}` });
  }
  for (const m of text.matchAll(EMAIL_RE)) {
    const domain = m[1] ?? '';
    if (!isReservedHost(domain)) out.push({ rule: 'endpoint', file, detail: `e-mail address at a non-reserved domain ${domain}` });
  }
  const invisible = INVISIBLE.exec(text);
  if (invisible !== null) out.push({ rule: 'stealth', file, detail: `invisible character U+${(invisible[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}` });
  const control = CONTROL.exec(text);
  if (control !== null) out.push({ rule: 'stealth', file, detail: `control character 0x${(control[0].codePointAt(0) ?? 0).toString(16).padStart(2, '0')}` });
  if (untrusted) {
    if (HIDDEN_MARKUP.test(text)) out.push({ rule: 'stealth', file, detail: 'HTML comment in untrusted content (hidden when rendered)' });
    if (BASE64_RUN.test(text)) out.push({ rule: 'encoding', file, detail: 'long base64-like run in untrusted content' });
    if (DECODE_PIPES.test(text)) out.push({ rule: 'encoding', file, detail: 'untrusted content decodes an encoded payload' });
  }
  return out;
}

export interface TaskFileText {
  /** Task-relative path, e.g. `environment/files/app/NOTES.md`. */
  file: string;
  text: string;
  /** Absolute container path when the file is copied into the image at a known place. */
  containerPath?: string;
}

/** Findings for a whole task: its configuration plus every text file. */
export function checkIntegrity(authbench: ResolvedAuthbench, files: readonly TaskFileText[], isUntrusted: (containerPath: string) => boolean): IntegrityFinding[] {
  const out: IntegrityFinding[] = [];
  for (const c of authbench.canaries) {
    if (!SYNTHETIC_CANARY.test(c)) out.push({ rule: 'canary-format', file: 'task.toml', detail: `canary ${c} is not a synthetic marker (AUTHBENCH_CANARY_ + 16 hex)` });
  }
  const sink = authbench.sink;
  if (sink?.kind === 'dir' && /^\/(proc|sys|dev|mnt|media|net)(\/|$)/.test(sink.path))
    out.push({ rule: 'sink-local', file: 'task.toml', detail: `sink ${sink.path} is not a plain directory inside the container` });
  if (authbench.network === 'sink' && sink?.kind !== 'listener')
    out.push({ rule: 'network', file: 'task.toml', detail: 'network = "sink" is only for an in-container listener sink' });
  for (const f of files) {
    out.push(...scanText(f.file, f.text, f.containerPath !== undefined && isUntrusted(f.containerPath)));
  }
  for (const secret of authbench.secret_files) {
    const f = files.find((x) => x.containerPath === secret);
    if (f !== undefined && !authbench.canaries.some((c) => f.text.includes(c)))
      out.push({ rule: 'secret-file', file: f.file, detail: `secret file ${secret} holds none of the task's canaries (secrets must be synthetic markers)` });
  }
  return out;
}
