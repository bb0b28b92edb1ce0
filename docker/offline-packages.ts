/**
 * Package installs a substituted base cannot serve as written, rewritten
 * before building and recorded (pure):
 *
 * - apt names: an `ubuntu:24.04` stage now runs on Debian 12, where Ubuntu's
 *   64-bit-time library names (`libssl3t64`) and a few others differ;
 * - pip: no Python package index is reachable offline, so `pip install` of
 *   requirements Debian packages is served by apt (`pytest==8.4.1` →
 *   python3-pytest, whatever version Debian has: flagged), and requirements
 *   that only serve Harbor's own harness are left out (flagged). A pip install
 *   with anything else (unknown packages, -r files, URLs) is left alone: it
 *   fails the build, and the error says why.
 *
 * Only stages whose base was substituted (directly, or in the image they
 * start from) are rewritten; a pip install is left alone when a package index
 * is configured through the PIP_INDEX_URL build arg.
 */
import { parseDockerfile } from '../core/index.ts';
import type { Translation } from './heredoc.ts';

/** Ubuntu 24.04 package names Debian 12 spells differently (beyond the generic `…t64` suffix, dropped). */
export const UBUNTU_TO_DEBIAN_APT: Readonly<Record<string, string>> = {
  libicu74: 'libicu72',
  'libncurses5-dev': 'libncurses-dev',
  'libncursesw5-dev': 'libncurses-dev',
  'libgdk-pixbuf2.0-0': 'libgdk-pixbuf-2.0-0',
  'python3.12': 'python3.11',
  'python3.12-venv': 'python3.11-venv',
  'python3.12-dev': 'python3.11-dev',
};

export type PipOffline = { debian: string } | { omit: string };

/** pip requirement (normalised name) → the Debian package that provides it, or why it is left out. */
export const PIP_OFFLINE: Readonly<Record<string, PipOffline>> = {
  pytest: { debian: 'python3-pytest' },
  'pytest-json-ctrf': { omit: "writes Harbor's CTRF test report; authbench runs pytest itself and reads its JUnit report" },
  'pytest-timeout': { debian: 'python3-pytest-timeout' },
  'pytest-mock': { debian: 'python3-pytest-mock' },
  hypothesis: { debian: 'python3-hypothesis' },
  requests: { debian: 'python3-requests' },
  pyyaml: { debian: 'python3-yaml' },
  numpy: { debian: 'python3-numpy' },
  pandas: { debian: 'python3-pandas' },
  flask: { debian: 'python3-flask' },
  jinja2: { debian: 'python3-jinja2' },
  click: { debian: 'python3-click' },
  rich: { debian: 'python3-rich' },
  beautifulsoup4: { debian: 'python3-bs4' },
  lxml: { debian: 'python3-lxml' },
  cryptography: { debian: 'python3-cryptography' },
  httpx: { debian: 'python3-httpx' },
  'python-dotenv': { debian: 'python3-dotenv' },
  toml: { debian: 'python3-toml' },
  jsonschema: { debian: 'python3-jsonschema' },
};

export interface StageRewrite {
  /** The stage runs on Debian where the Dockerfile asked for Ubuntu. */
  aptUbuntuToDebian: boolean;
  /** No package index: serve pip installs from Debian packages. */
  pipOffline: boolean;
}

/** A Debian name for an Ubuntu 24.04 package name (`libssl3t64` → `libssl3`), or undefined when it is the same. */
export function debianAptName(name: string): string | undefined {
  const [pkg = '', suffix = ''] = /^([^:=]+)(.*)$/.exec(name)?.slice(1) ?? [];
  const mapped = UBUNTU_TO_DEBIAN_APT[pkg] ?? (/^lib.+t64$/.test(pkg) ? pkg.slice(0, -'t64'.length) : undefined);
  return mapped === undefined || mapped === pkg ? undefined : `${mapped}${suffix}`;
}

/** PEP 503 normalisation, then the name without extras and version specifiers. */
export function requirementName(req: string): string | undefined {
  const m = /^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*((?:[<>=!~]=?|===)\s*[^\s;]+(?:\s*,\s*(?:[<>=!~]=?)\s*[^\s,;]+)*)?$/.exec(req.trim());
  return m?.[1] === undefined ? undefined : m[1].toLowerCase().replace(/[._-]+/g, '-');
}

interface Token {
  text: string;
  start: number;
  end: number;
}

function tokens(command: string): Token[] {
  return [...command.matchAll(/\S+/g)].map((m) => ({ text: m[0], start: m.index, end: m.index + m[0].length }));
}

/** A token that ends a simple command (operators, redirections), possibly glued to the previous word. */
function endsCommand(text: string): boolean {
  return /^(?:&&|\|\||;|\||\)|>|<|&|2>|\d>)/.test(text);
}

function unquote(word: string): string {
  return /^(['"]).*\1$/.test(word) ? word.slice(1, -1) : word;
}

interface Edit {
  start: number;
  end: number;
  text: string;
}

function aptEdits(toks: readonly Token[]): { edits: Edit[]; notes: string[] } {
  const edits: Edit[] = [];
  const notes: string[] = [];
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]?.text ?? '';
    if (!/^(?:\S*\/)?apt(?:-get)?$/.test(t)) continue;
    let j = i + 1;
    while (j < toks.length && (toks[j]?.text ?? '').startsWith('-')) j++;
    if (toks[j]?.text !== 'install') continue;
    for (j++; j < toks.length; j++) {
      const tok = toks[j] as Token;
      const word = tok.text.replace(/[;&|)]+$/, '');
      if (endsCommand(tok.text)) break;
      if (!word.startsWith('-') && word !== '\\') {
        const mapped = debianAptName(unquote(word));
        if (mapped !== undefined) {
          edits.push({ start: tok.start, end: tok.start + word.length, text: mapped });
          notes.push(`${unquote(word)} → ${mapped}`);
        }
      }
      if (word !== tok.text) break;
    }
  }
  return { edits, notes };
}

/** Options whose value is the next word; the ones that need an index or files make the install untranslatable. */
const PIP_VALUE_OPTIONS = new Set(['-t', '--target', '--prefix', '--root', '--root-user-action', '--progress-bar', '--python-version', '--platform']);
const PIP_UNTRANSLATABLE = /^(?:-r|--requirement|-c|--constraint|-e|--editable|-i|--index-url|--extra-index-url|-f|--find-links)(?:=|$)/;

function pipEdits(command: string, toks: readonly Token[]): { edits: Edit[]; notes: string[]; flagged: boolean; blocked: string[] } {
  const edits: Edit[] = [];
  const notes: string[] = [];
  const blocked: string[] = [];
  let flagged = false;
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]?.text ?? '';
    let j: number;
    if (/^(?:\S*\/)?pip(?:3(?:\.\d+)?)?$/.test(t)) j = i + 1;
    else if (/^(?:\S*\/)?python(?:3(?:\.\d+)?)?$/.test(t) && toks[i + 1]?.text === '-m' && toks[i + 2]?.text === 'pip') j = i + 3;
    else continue;
    if (toks[j]?.text !== 'install') continue;
    const requirements: string[] = [];
    let untranslatable: string | undefined;
    let last = j;
    for (j++; j < toks.length; j++) {
      const tok = toks[j] as Token;
      if (endsCommand(tok.text)) break;
      const word = tok.text.replace(/[;&|)]+$/, '');
      last = j;
      if (word === '\\' || word === '') continue;
      if (PIP_UNTRANSLATABLE.test(word)) untranslatable ??= `${word} needs a package index or files`;
      else if (PIP_VALUE_OPTIONS.has(word)) j++;
      else if (!word.startsWith('-')) requirements.push(unquote(word));
      if (word !== tok.text) break;
    }
    const debs: string[] = [];
    for (const req of requirements) {
      const name = requirementName(req);
      const known = name === undefined ? undefined : PIP_OFFLINE[name];
      if (known === undefined) {
        untranslatable ??= `no Debian package is known to provide ${req}`;
        continue;
      }
      if ('debian' in known) {
        debs.push(known.debian);
        notes.push(`${req} → ${known.debian} (Debian's version)`);
        if (/[<>=!~]/.test(req)) flagged = true;
      } else {
        notes.push(`${req} left out: ${known.omit}`);
        flagged = true;
      }
    }
    const startTok = toks[i] as Token;
    const endTok = toks[last] as Token;
    // `python3 -m pip install`: the `pip` inside is not a second install.
    i = last;
    if (untranslatable !== undefined) {
      blocked.push(`${command.slice(startTok.start, endTok.end)}: ${untranslatable}`);
      continue;
    }
    const replacement =
      debs.length === 0
        ? 'true'
        : `{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${[...new Set(debs)].join(' ')}; }`;
    // Keep an operator glued to the last word (`pytest==8.4.1;`).
    const glued = endTok.text.slice(endTok.text.replace(/[;&|)]+$/, '').length);
    edits.push({ start: startTok.start, end: endTok.end - glued.length, text: replacement });
  }
  return { edits, notes, flagged, blocked };
}

function applyEdits(command: string, edits: readonly Edit[]): string {
  let out = command;
  for (const e of [...edits].sort((a, b) => b.start - a.start)) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}

export interface PackageRewriteResult {
  text: string;
  translations: Translation[];
  /** pip installs left as written that cannot work offline (for the error when the build then fails). */
  blocked: string[];
}

/**
 * Rewrite the shell-form RUN instructions of the stages `rewrites` names
 * (index → what to do). A rewritten instruction is written on its first line,
 * its continuation lines left blank, so line numbers stay those of the file.
 */
export function rewritePackageInstalls(text: string, rewrites: ReadonlyMap<number, StageRewrite>): PackageRewriteResult {
  const translations: Translation[] = [];
  const blocked: string[] = [];
  if (![...rewrites.values()].some((r) => r.aptUbuntuToDebian || r.pipOffline)) return { text, translations, blocked };
  const df = parseDockerfile(text);
  const lines = text.split(/\r?\n/);
  for (const [index, stage] of df.stages.entries()) {
    const rewrite = rewrites.get(index);
    if (rewrite === undefined) continue;
    for (const ins of stage.instructions) {
      if (ins.keyword !== 'RUN' || ins.heredocs.length > 0 || ins.args.trimStart().startsWith('[')) continue;
      const toks = tokens(ins.args);
      const apt = rewrite.aptUbuntuToDebian ? aptEdits(toks) : { edits: [], notes: [] };
      const pip = rewrite.pipOffline ? pipEdits(ins.args, toks) : { edits: [], notes: [], flagged: false, blocked: [] };
      blocked.push(...pip.blocked.map((b) => `line ${ins.startLine + 1}: ${b}`));
      if (apt.edits.length === 0 && pip.edits.length === 0) continue;
      lines[ins.startLine] = `RUN ${applyEdits(ins.args, [...apt.edits, ...pip.edits]).trim()}`;
      for (let l = ins.startLine + 1; l <= ins.endLine; l++) lines[l] = '';
      if (apt.notes.length > 0) {
        translations.push({ kind: 'apt-name', line: ins.startLine + 1, detail: `apt package names for Debian: ${apt.notes.join(', ')}`, flagged: true });
      }
      if (pip.edits.length > 0) {
        translations.push({
          kind: 'pip-offline',
          line: ins.startLine + 1,
          detail: `pip install served by Debian packages (no package index offline): ${pip.notes.join('; ')}`,
          flagged: pip.flagged,
        });
      }
    }
  }
  return { text: lines.join('\n'), translations, blocked };
}
