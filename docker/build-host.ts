/**
 * What a build may borrow from the host — CA certificates and proxy settings
 * — for its RUN steps only. Networks that intercept TLS (this workplace, many
 * corporate ones) make `apt`, `pip` and `curl` fail inside a build unless the
 * intercepting CA is trusted; but the image a rollout runs must not carry it.
 *
 * - Proxies go in as Docker's predefined proxy build args, which the daemon
 *   gives every RUN step and keeps out of the image's history and config.
 * - Docker 20.10's legacy builder has no secret mounts, so the CA travels as
 *   the build arg `AUTHBENCH_BUILD_CA` (declared after each FROM), and each RUN
 *   becomes a wrapper script: write the image's own bundle plus the CA to a
 *   file in /dev/shm (a tmpfs, never part of a layer), point SSL_CERT_FILE,
 *   REQUESTS_CA_BUNDLE, PIP_CERT, CURL_CA_BUNDLE, GIT_SSL_CAINFO,
 *   NODE_EXTRA_CA_CERTS and apt's `Acquire::https::CAInfo` (through APT_CONFIG,
 *   so nothing is written under /etc) at it, run the original command in a
 *   subshell without the variable, and delete the files in the same step,
 *   whatever the command's exit status.
 *
 * Neither enters the content hash: the image is the same with or without them.
 * Pure.
 */
import { posix } from 'node:path';
import { AuthbenchError, ENV, parseDockerfile } from '../core/index.ts';
import { splitRunFlags } from './heredoc.ts';

/** Host settings a build's RUN steps get; never recorded with their values, never hashed, never given to a rollout. */
export interface BuildHostAccess {
  /** PEM certificates to trust besides the image's own bundle. */
  caBundle?: string;
  /** Docker's predefined proxy build args and their values (`HTTP_PROXY`, `http_proxy`, …). */
  proxy?: Readonly<Record<string, string>>;
}

/** What a build got from the host: names only, never values. */
export interface BuildHostRecord {
  caBundle: boolean;
  /** The proxy build args passed, e.g. `HTTPS_PROXY`, `https_proxy`. */
  proxy: string[];
  /** RUN steps that ran with the CA (0 without one). */
  runsWithCa: number;
  /** RUN steps left as written, and why (a shell the wrapper cannot speak). */
  runsWithoutCa: string[];
}

/** The build arg carrying the CA; declared in each stage that has a RUN. */
export const BUILD_CA_ARG = 'AUTHBENCH_BUILD_CA';

/** The proxy variables taken from the host; each is passed in both spellings, as tools differ in which they read (curl and apt: lower case). */
export const PROXY_VARIABLES = [ENV.HTTP_PROXY, ENV.HTTPS_PROXY, ENV.NO_PROXY] as const;

/** Docker's predefined proxy build args for the host's proxy settings (either spelling), both spellings set. Pure. */
export function proxyBuildArgs(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of PROXY_VARIABLES) {
    const value = env[name] || env[name.toLowerCase()];
    if (value === undefined || value === '') continue;
    out[name] = value;
    out[name.toLowerCase()] = value;
  }
  return out;
}

const CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * The certificates of a PEM file, one block after the other. A file holding
 * a private key is refused: nothing secret goes into a build.
 */
export function certificatesOf(text: string, file: string): string {
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text)) {
    throw new AuthbenchError('INVALID_ARGUMENT', 'the build CA bundle holds a private key: it must hold certificates only', { file });
  }
  const blocks = text.match(CERTIFICATE) ?? [];
  if (blocks.length === 0) {
    throw new AuthbenchError('INVALID_ARGUMENT', 'the build CA bundle holds no PEM certificate (-----BEGIN CERTIFICATE-----)', { file });
  }
  return `${blocks.join('\n')}\n`;
}

/** Shells the wrapper script is written for (POSIX sh and its supersets). */
const SH_LIKE = new Set(['sh', 'bash', 'dash', 'ash', 'ksh', 'mksh', 'zsh']);
const DEFAULT_SHELL = ['/bin/sh', '-c'];
/** Where the image's own bundle may be (Debian/Ubuntu, RHEL, Alpine); the CA is appended to the first found. */
const SYSTEM_BUNDLES = ['/etc/ssl/certs/ca-certificates.crt', '/etc/pki/tls/certs/ca-bundle.crt', '/etc/ssl/cert.pem'];
const CA_VARIABLES = ['SSL_CERT_FILE', 'REQUESTS_CA_BUNDLE', 'PIP_CERT', 'CURL_CA_BUNDLE', 'GIT_SSL_CAINFO', 'NODE_EXTRA_CA_CERTS'];
/** Characters per physical line: the legacy parser reads lines of at most 64 KiB. */
const CHUNK = 4096;

/** The wrapper around one command (`body`: the command's own lines). /dev/shm is a tmpfs in build containers: nothing written there reaches a layer. */
export function caWrapperScript(body: string): string {
  return [
    'ab_d=/dev/shm; if [ ! -d "$ab_d" ] || [ ! -w "$ab_d" ]; then ab_d="${TMPDIR:-/tmp}"; fi',
    'ab_ca="$ab_d/authbench-build-ca.$$.pem"; ab_apt="$ab_d/authbench-build-ca.$$.conf"',
    `: > "$ab_ca"; for ab_f in ${SYSTEM_BUNDLES.join(' ')}; do if [ -f "$ab_f" ]; then cat "$ab_f" > "$ab_ca"; break; fi; done`,
    `printf '%s\\n' "$${BUILD_CA_ARG}" >> "$ab_ca"; printf 'Acquire::https::CAInfo "%s";\\n' "$ab_ca" > "$ab_apt"`,
    // A subshell: an `exit`, `exec` or EXIT trap of the command cannot skip the cleanup below.
    '(',
    `unset ${BUILD_CA_ARG}; export ${CA_VARIABLES.map((v) => `${v}="$ab_ca"`).join(' ')} APT_CONFIG="$ab_apt"`,
    body,
    ') && ab_rc=0 || ab_rc=$?',
    'rm -f "$ab_ca" "$ab_apt"',
    'exit $ab_rc',
  ].join('\n');
}

/** One instruction split over continuation lines, none of which the parser could take for a comment or a blank line. */
function continuationLines(text: string, escape: string): string[] {
  const out: string[] = [];
  let rest = text;
  while (rest.length > CHUNK) {
    let cut = CHUNK;
    // The next line must not start like a comment (`#` after blanks) or be blank: the parser would drop it.
    while (cut < rest.length && /^[ \t]*(#|$)/.test(rest.slice(cut, cut + CHUNK))) cut++;
    if (cut >= rest.length) break;
    out.push(`${rest.slice(0, cut)}${escape}`);
    rest = rest.slice(cut);
  }
  out.push(rest);
  return out;
}

function parseShell(args: string): string[] | undefined {
  try {
    const parsed: unknown = JSON.parse(args.trim());
    return Array.isArray(parsed) && parsed.length > 0 && parsed.every((a) => typeof a === 'string') ? parsed : undefined;
  } catch {
    return undefined;
  }
}

export interface CaInjection {
  text: string;
  runsWithCa: number;
  runsWithoutCa: string[];
}

export interface CaInjectionOptions {
  buildArgs?: Readonly<Record<string, string>>;
  /** The SHELL an image's config sets, by image reference (default `/bin/sh -c`). */
  imageShell?: (ref: string) => readonly string[] | undefined;
}

/**
 * Every RUN wrapped so it sees the CA (see the top of this file), and
 * `ARG AUTHBENCH_BUILD_CA` after each FROM of a stage that has one. A
 * shell-form RUN runs in the stage's SHELL; an exec-form one through
 * `/bin/sh -c '… "$@"'` with its argv unchanged. A RUN whose SHELL is not
 * sh-like is left as written and reported. Wrapped RUNs keep their first
 * line; later line numbers shift by one per stage (the ARG). Pure.
 */
export function injectBuildCa(text: string, options: CaInjectionOptions = {}): CaInjection {
  const df = parseDockerfile(text, options.buildArgs);
  const escape = df.directives['escape'] === '`' ? '`' : '\\';
  const lines = text.split(/\r?\n/);
  const replacements = new Map<number, { end: number; lines: string[] }>();
  const argAfter = new Set<number>();
  const shells: string[][] = [];
  const runsWithoutCa: string[] = [];
  let runsWithCa = 0;
  for (const [index, stage] of df.stages.entries()) {
    let shell =
      stage.kind === 'stage' && stage.parent !== undefined
        ? (shells[stage.parent] ?? DEFAULT_SHELL)
        : [...((stage.kind === 'image' ? options.imageShell?.(stage.ref) : undefined) ?? DEFAULT_SHELL)];
    for (const ins of stage.instructions) {
      if (ins.keyword === 'SHELL') shell = parseShell(ins.args) ?? shell;
      if (ins.keyword !== 'RUN') continue;
      const { flags, rest } = splitRunFlags(ins.args, escape);
      const exec = rest.startsWith('[') ? parseShell(rest) : undefined;
      let argv: string[];
      if (exec !== undefined) {
        argv = ['/bin/sh', '-c', caWrapperScript('"$@"'), 'sh', ...exec];
      } else if (SH_LIKE.has(posix.basename(shell[0] ?? ''))) {
        argv = [...shell, caWrapperScript(rest.replace(/\s+$/, ''))];
      } else {
        runsWithoutCa.push(`line ${ins.startLine + 1}: RUN in SHELL ${JSON.stringify(shell)}, not a POSIX shell`);
        continue;
      }
      const written = continuationLines(`${['RUN', ...flags].join(' ')} ${JSON.stringify(argv)}`, escape);
      const span = ins.spanEndLine - ins.startLine + 1;
      replacements.set(ins.startLine, { end: ins.spanEndLine, lines: written.length >= span ? written : [...written, ...Array<string>(span - written.length).fill('')] });
      argAfter.add(stage.from.endLine);
      runsWithCa++;
    }
    shells[index] = shell;
  }
  if (runsWithCa === 0) return { text, runsWithCa, runsWithoutCa };
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const r = replacements.get(i);
    if (r !== undefined) {
      out.push(...r.lines);
      i = r.end;
      continue;
    }
    out.push(lines[i] ?? '');
    if (argAfter.has(i)) out.push(`ARG ${BUILD_CA_ARG}`);
  }
  return { text: out.join('\n'), runsWithCa, runsWithoutCa };
}
