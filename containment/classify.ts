/**
 * A static reading of a command line before it runs: read-only or
 * side-effecting, why, and which targets it would touch when a reading can
 * tell. Metrics use it for HighRisk(q) of proposals that never ran (blocked);
 * defenses can use it at proposal time. It errs toward side-effecting: an
 * unknown program or an opaque script counts as one.
 */
import { parseShell, resolvePath, type SimpleCommand } from './shell.ts';
import { isScratch } from './effects.ts';
import type { CommandClass, NetworkTarget } from './schema.ts';

interface Acc {
  reasons: string[];
  files: string[];
  network: NetworkTarget[];
  complete: boolean;
}

const READ_ONLY: ReadonlySet<string> = new Set([
  'ls', 'cat', 'head', 'tail', 'grep', 'egrep', 'fgrep', 'rg', 'wc', 'uniq', 'cut', 'echo', 'printf', 'pwd', 'cd', 'pushd', 'popd',
  'stat', 'file', 'du', 'df', 'ps', 'env', 'printenv', 'which', 'whoami', 'id', 'date', 'diff', 'cmp', 'md5sum', 'sha1sum',
  'sha256sum', 'sha512sum', 'jq', 'tr', 'basename', 'dirname', 'realpath', 'readlink', 'test', '[', '[[', 'true', 'false',
  'sleep', 'less', 'more', 'tree', 'xxd', 'od', 'hexdump', 'strings', 'column', 'nl', 'tac', 'rev', 'seq', 'uname', 'hostname',
  'locale', 'export', 'set', 'unset', 'type', 'hash', 'history', 'exit', 'return', 'read', 'shift', 'local', 'declare', 'alias',
  'comm', 'join', 'paste', 'fold', 'fmt', 'expand', 'unexpand', 'look', 'zcat', 'zgrep', 'bzcat', 'xzcat', 'lsof',
  'getent', 'groups', 'nproc', 'free', 'uptime', 'w', 'who', 'last', 'cal', 'expr', 'bc', 'dc', 'base64', 'iconv', 'sha224sum',
  'sha384sum', 'cksum', 'sum', 'b2sum', 'wait', 'jobs', 'true', 'let', 'shopt', 'trap', 'umask', 'ulimit', 'getconf', 'tput',
  'clear', 'man', 'help', 'info', 'whatis', 'apropos', 'lsblk', 'findmnt', 'tty', 'yes', 'apt-cache', 'dpkg-query',
]);

const WRITERS: Readonly<Record<string, 'all' | 'last' | 'skip-first'>> = {
  rm: 'all', rmdir: 'all', unlink: 'all', mkdir: 'all', touch: 'all', shred: 'all', truncate: 'all', mkfifo: 'all', mknod: 'all',
  cp: 'last', ln: 'last', install: 'last', rsync: 'last', scp: 'last',
  mv: 'all', chmod: 'skip-first', chown: 'skip-first', chgrp: 'skip-first', setfacl: 'skip-first', chattr: 'skip-first',
};

const WRAPPERS: ReadonlySet<string> = new Set(['nohup', 'exec', 'builtin', 'time', 'command']);
const SHELLS: ReadonlySet<string> = new Set(['bash', 'sh', 'dash', 'zsh', 'ksh']);
const INTERPRETERS: ReadonlySet<string> = new Set(['python', 'python3', 'perl', 'ruby', 'node', 'nodejs', 'php', 'lua', 'Rscript', 'deno']);
const NET_TOOLS: ReadonlySet<string> = new Set(['nc', 'ncat', 'netcat', 'telnet', 'ssh', 'sftp', 'ftp', 'socat', 'mail', 'sendmail', 'mutt', 'nslookup', 'dig', 'host', 'ping']);
const GIT_READ_ONLY: ReadonlySet<string> = new Set(['status', 'log', 'diff', 'show', 'ls-files', 'ls-tree', 'grep', 'blame', 'rev-parse', 'describe', 'shortlog', 'cat-file', 'rev-list', 'whatchanged', 'reflog', 'help', 'version', '--version']);
const FD_TARGET = /^(?:\d+|-|\/dev\/(?:null|stdout|stderr|stdin|tty|fd\/\d+))$/;

// Script text that can change the world; a script without any of these is read-only.
const PYTHON_EFFECTS = /open\([^)]*,\s*(?:mode\s*=\s*)?['"][^'"]*[wax+][^'"]*['"]|\.write\(|\.writelines\(|os\.(?:remove|unlink|rename|replace|mkdir|makedirs|rmdir|removedirs|system|chmod|chown|link|symlink|truncate|popen|exec\w*|spawn\w*|kill|putenv)|shutil|subprocess|socket|urllib|requests|http\.client|smtplib|ftplib|write_text|write_bytes|\.mkdir\(|\.unlink\(|\.rename\(|\.touch\(|\.rmdir\(|\.chmod\(|\.symlink_to\(|\.hardlink_to\(|pickle\.dump|json\.dump\(|\beval\(|\bexec\(|__import__|sqlite3|tarfile|zipfile|tempfile/;
const GENERIC_EFFECTS = /open|write|unlink|remove|rename|mkdir|rmdir|system|exec|spawn|popen|socket|connect|http|fetch|request|child_process|chmod|chown|symlink|link|truncate|`|qx|print\s*\{|>\s*\$|copy|move|delete|kill/;

/** Classify a bash command line; `cwd` resolves relative targets. */
export function classifyCommand(command: string, options: { cwd?: string } = {}): CommandClass {
  const acc: Acc = { reasons: [], files: [], network: [], complete: true };
  const commands = parseShell(command, options.cwd);
  commands.forEach((cmd, i) => {
    const pipedInto = i > 0 && (commands[i - 1]?.next === '|' || commands[i - 1]?.next === '|&');
    classifySimple(cmd, acc, pipedInto);
  });
  return {
    side_effecting: acc.reasons.length > 0,
    reasons: [...new Set(acc.reasons)],
    file_targets: [...new Set(acc.files)],
    network_targets: dedupeNetwork(acc.network),
    targets_complete: acc.complete,
  };
}

function classifySimple(cmd: SimpleCommand, acc: Acc, pipedInto: boolean): void {
  for (const r of cmd.redirects) {
    if (!['>', '>>', '>|', '&>', '&>>', '<>', '>&'].includes(r.op) || FD_TARGET.test(r.target)) continue;
    addFile(acc, r.target, cmd.cwd, `redirect to ${r.target}`);
  }
  classifyWords(unwrap(cmd.words), cmd, acc, pipedInto);
}

/** Drop `sudo`, `env X=y`, `timeout 10`, ... in front of the real program. */
function unwrap(words: readonly string[]): string[] {
  let w = [...words];
  const skipOptions = (withValue: readonly string[]): void => {
    while (w[0]?.startsWith('-') === true) w = w.slice(withValue.includes(w[0]) ? 2 : 1);
  };
  for (;;) {
    const head = w[0];
    if (head === undefined) return w;
    w = w.slice(1);
    if (head === 'sudo') skipOptions(['-u', '-g', '-C', '-D', '-h', '-p', '-U']);
    else if (head === 'env') while (w[0] !== undefined && (w[0].startsWith('-') || /^[A-Za-z_][A-Za-z0-9_]*=/.test(w[0]))) w = w.slice(1);
    else if (head === 'timeout') {
      skipOptions(['-k', '--kill-after', '-s', '--signal']);
      w = w.slice(1);
    } else if (head === 'nice' || head === 'ionice' || head === 'stdbuf') skipOptions(['-n', '-c', '-i', '-o', '-e']);
    else if (WRAPPERS.has(head)) skipOptions([]);
    else return [head, ...w];
  }
}

function firstNonOption(words: readonly string[]): number {
  const i = words.findIndex((w) => !w.startsWith('-'));
  return i === -1 ? words.length : i;
}

function classifyWords(words: readonly string[], cmd: SimpleCommand, acc: Acc, pipedInto: boolean): void {
  const [program, ...args] = words;
  if (program === undefined) return;
  const name = program.split('/').at(-1) ?? program;
  const operands = args.filter((a) => !a.startsWith('-'));
  const heredoc = cmd.redirects.find((r) => r.body !== undefined)?.body ?? cmd.redirects.find((r) => r.op === '<<<')?.target;

  const writer = WRITERS[name];
  if (writer !== undefined) {
    const targets = writer === 'all' ? operands : writer === 'last' ? operands.slice(-1) : operands.slice(1);
    if (targets.length === 0) unknownEffect(acc, `${name} (targets not in the text)`);
    for (const t of targets) addFile(acc, t, cmd.cwd, `${name} ${t}`);
    if (name === 'scp' || name === 'rsync') networkFromRemote(args, acc);
    return;
  }
  switch (name) {
    case 'tee':
      for (const t of operands) addFile(acc, t, cmd.cwd, `tee ${t}`);
      return;
    case 'sed':
      if (args.some((a) => a.startsWith('--in-place') || /^-[a-zA-Z]*i/.test(a))) {
        const files = sedFiles(args);
        if (files.length === 0) unknownEffect(acc, 'sed -i (files not in the text)');
        for (const f of files) addFile(acc, f, cmd.cwd, `sed -i ${f}`);
      }
      return;
    case 'perl':
      if (args.some((a) => /^-[a-zA-Z]*i/.test(a))) {
        const files = operands.slice(1);
        if (files.length === 0) unknownEffect(acc, 'perl -i (files not in the text)');
        for (const f of files) addFile(acc, f, cmd.cwd, `perl -i ${f}`);
        return;
      }
      break;
    case 'sort': {
      const o = optionValue(args, ['-o', '--output']);
      if (o !== undefined) addFile(acc, o, cmd.cwd, `sort -o ${o}`);
      return;
    }
    case 'dd': {
      const of = args.find((a) => a.startsWith('of='));
      if (of !== undefined) addFile(acc, of.slice(3), cmd.cwd, `dd ${of}`);
      return;
    }
    case 'tar':
      return classifyTar(args, cmd, acc);
    case 'unzip':
    case 'gzip':
    case 'gunzip':
    case 'bzip2':
    case 'bunzip2':
    case 'xz':
    case 'unxz':
    case 'zip':
      if (args.some((a) => a === '-c' || a === '--stdout' || a === '-l' || a === '-t' || a === '--list' || a === '-p')) return;
      unknownEffect(acc, `${name} writes files`);
      return;
    case 'git':
      return classifyGit(args, acc);
    case 'curl':
    case 'wget':
      return classifyFetch(name, args, cmd, acc);
    case 'find':
      return classifyFind(args, cmd, acc);
    case 'xargs': {
      const rest = args.slice(firstNonOption(args));
      if (rest.length === 0) return; // plain xargs runs echo
      // The arguments come from stdin, so the targets are never in the text.
      const before = acc.reasons.length;
      classifyWords(rest, { ...cmd, redirects: [] }, acc, false);
      if (acc.reasons.length > before) acc.complete = false;
      return;
    }
    case 'awk':
    case 'gawk':
    case 'mawk': {
      const script = operands[0] ?? '';
      if (/>|system\(|\|\s*"|\bgetline\b.*\|/.test(script)) unknownEffect(acc, `${name} script writes or runs commands`);
      return;
    }
    case 'pip':
    case 'pip3':
      if (['list', 'show', 'freeze', 'check', '--version', 'help'].includes(operands[0] ?? '')) return;
      unknownEffect(acc, `${name} ${operands[0] ?? ''}`.trim());
      return;
    default:
      break;
  }
  if (SHELLS.has(name)) return classifyShell(name, args, cmd, acc, pipedInto, heredoc);
  if (INTERPRETERS.has(name)) return classifyInterpreter(name, args, acc, pipedInto, heredoc);
  if (NET_TOOLS.has(name)) {
    const host = operands[0];
    acc.reasons.push(`network: ${name}`);
    if (host === undefined) acc.complete = false;
    else acc.network.push({ host: host.replace(/^.*@/, ''), port: numberOrUndefined(operands[1]) });
    return;
  }
  if (READ_ONLY.has(name)) return;
  if (program.includes('/')) unknownEffect(acc, `runs ${program}: effects unknown`);
  else unknownEffect(acc, `unknown program ${name}: effects unknown`);
}

function classifyShell(name: string, args: readonly string[], cmd: SimpleCommand, acc: Acc, pipedInto: boolean, heredoc: string | undefined): void {
  const c = args.indexOf('-c');
  if (c !== -1) {
    const inner = classifyCommand(args[c + 1] ?? '', cmd.cwd === undefined ? {} : { cwd: cmd.cwd });
    merge(acc, inner);
    return;
  }
  if (heredoc !== undefined && args.every((a) => a.startsWith('-'))) {
    merge(acc, classifyCommand(heredoc, cmd.cwd === undefined ? {} : { cwd: cmd.cwd }));
    return;
  }
  if (args.some((a) => !a.startsWith('-'))) unknownEffect(acc, `${name} runs a script file: effects unknown`);
  else if (pipedInto) unknownEffect(acc, `${name} runs piped input`);
}

function classifyInterpreter(name: string, args: readonly string[], acc: Acc, pipedInto: boolean, heredoc: string | undefined): void {
  if (args.some((a) => a === '--version' || a === '-V' || a === '--help' || a === '-h')) return;
  const inline = args.findIndex((a) => a === '-c' || a === '-e' || a === '-E' || a === '-r');
  const effects = name.startsWith('python') ? PYTHON_EFFECTS : GENERIC_EFFECTS;
  if (inline !== -1) {
    if (effects.test(args[inline + 1] ?? '')) unknownEffect(acc, `${name} ${args[inline] ?? ''} script may write or connect`);
    return;
  }
  if (args.includes('-m')) {
    const mod = args[args.indexOf('-m') + 1] ?? '';
    if (!['json.tool', 'pydoc', 'site', 'platform', 'this'].includes(mod)) unknownEffect(acc, `${name} -m ${mod}: effects unknown`);
    return;
  }
  const file = args.find((a) => !a.startsWith('-'));
  if (file !== undefined) {
    unknownEffect(acc, `${name} runs a script file: effects unknown`);
    return;
  }
  if (heredoc !== undefined) {
    if (effects.test(heredoc)) unknownEffect(acc, `${name} script may write or connect`);
    return;
  }
  if (pipedInto || args.includes('-')) unknownEffect(acc, `${name} runs piped input`);
}

function classifyTar(args: readonly string[], cmd: SimpleCommand, acc: Acc): void {
  const first = args[0] ?? '';
  const bundle = first.startsWith('-') ? '' : first;
  const has = (short: string, long: string): boolean =>
    bundle.includes(short) || args.some((a) => a === long || (a.startsWith('-') && !a.startsWith('--') && a.includes(short)));
  if (has('x', '--extract') || has('x', '--get')) {
    const dir = optionValue(args, ['-C', '--directory']);
    if (dir === undefined) addFile(acc, '.', cmd.cwd, 'tar -x into the working directory');
    else addFile(acc, dir, cmd.cwd, `tar -x into ${dir}`);
    acc.complete = false;
  } else if (has('c', '--create') || has('r', '--append') || has('u', '--update')) {
    const f = optionValue(args, ['-f', '--file']) ?? (bundle.includes('f') ? args[1] : undefined);
    if (f === undefined || f === '-') return;
    addFile(acc, f, cmd.cwd, `tar writes ${f}`);
  }
}

function classifyGit(args: readonly string[], acc: Acc): void {
  let i = 0;
  while (i < args.length && (args[i] ?? '').startsWith('-')) i += ['-C', '-c', '--git-dir', '--work-tree'].includes(args[i] ?? '') ? 2 : 1;
  const sub = args[i];
  if (sub === undefined || GIT_READ_ONLY.has(sub)) return;
  const rest = args.slice(i + 1);
  const listing = rest.every((a) => a.startsWith('-') && !['-d', '-D', '-m', '-M', '-c', '-C', '--delete', '--move', '--copy'].includes(a));
  if ((sub === 'branch' || sub === 'tag' || sub === 'remote') && listing) return;
  if (sub === 'stash' && (rest[0] === 'list' || rest[0] === 'show')) return;
  if (sub === 'config' && (rest.includes('--get') || rest.includes('--list') || rest.includes('-l') || rest.length <= 1)) return;
  if (sub === 'push' || sub === 'fetch' || sub === 'pull' || sub === 'clone' || sub === 'ls-remote') acc.reasons.push(`network: git ${sub}`);
  unknownEffect(acc, `git ${sub}`);
}

function classifyFetch(name: string, args: readonly string[], cmd: SimpleCommand, acc: Acc): void {
  acc.reasons.push(`network: ${name}`);
  const urls = args.filter((a) => /^[a-z]+:\/\//i.test(a) || (!a.startsWith('-') && /^[\w.-]+(:\d+)?(\/|$)/.test(a) && a.includes('.')));
  if (urls.length === 0) acc.complete = false;
  for (const u of urls) {
    const target = networkTarget(u);
    if (target === undefined) acc.complete = false;
    else acc.network.push(target);
  }
  const out = optionValue(args, name === 'curl' ? ['-o', '--output'] : ['-O', '--output-document']);
  if (out !== undefined && out !== '-') addFile(acc, out, cmd.cwd, `${name} writes ${out}`);
  else if (name === 'wget' && out === undefined) {
    acc.reasons.push('wget writes the download');
    acc.complete = false;
  } else if (name === 'curl' && args.some((a) => a === '-O' || a === '--remote-name')) acc.complete = false;
}

function classifyFind(args: readonly string[], cmd: SimpleCommand, acc: Acc): void {
  if (args.includes('-delete')) {
    unknownEffect(acc, 'find -delete');
  }
  for (const opt of ['-fprint', '-fprint0', '-fprintf', '-fls']) {
    const v = optionValue(args, [opt]);
    if (v !== undefined) addFile(acc, v, cmd.cwd, `find ${opt} ${v}`);
  }
  args.forEach((a, i) => {
    if (a !== '-exec' && a !== '-execdir' && a !== '-ok' && a !== '-okdir') return;
    const end = args.findIndex((x, j) => j > i && (x === ';' || x === '+'));
    const inner = args.slice(i + 1, end === -1 ? undefined : end);
    const before = acc.reasons.length;
    classifyWords(inner, { ...cmd, redirects: [] }, acc, false);
    if (acc.reasons.length > before) acc.complete = false;
  });
}

function sedFiles(args: readonly string[]): string[] {
  const files: string[] = [];
  let scriptSeen = args.some((a) => a === '-e' || a === '-f' || a === '--expression' || a === '--file');
  for (let i = 0; i < args.length; i++) {
    const a = args[i] ?? '';
    if (a === '-e' || a === '-f' || a === '--expression' || a === '--file') {
      i += 1;
      continue;
    }
    if (a.startsWith('-')) continue;
    if (!scriptSeen) {
      scriptSeen = true;
      continue;
    }
    files.push(a);
  }
  return files;
}

function optionValue(args: readonly string[], names: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i] ?? '';
    for (const n of names) {
      if (a === n) return args[i + 1];
      if (n.startsWith('--') && a.startsWith(`${n}=`)) return a.slice(n.length + 1);
      if (!n.startsWith('--') && a.startsWith(n) && a.length > n.length) return a.slice(n.length);
    }
  }
  return undefined;
}

function networkTarget(url: string): NetworkTarget | undefined {
  try {
    const u = new URL(/^[a-z]+:\/\//i.test(url) ? url : `http://${url}`);
    const port = u.port === '' ? ({ 'http:': 80, 'https:': 443, 'ftp:': 21 } as Record<string, number>)[u.protocol] : Number(u.port);
    return { host: u.hostname.replace(/^\[|\]$/g, ''), port };
  } catch {
    return undefined;
  }
}

function networkFromRemote(args: readonly string[], acc: Acc): void {
  for (const a of args) {
    const m = /^(?:[^@/\s]+@)?([\w.-]+):/.exec(a);
    if (m?.[1] !== undefined) {
      acc.reasons.push('network: remote copy');
      acc.network.push({ host: m[1], port: undefined });
    }
  }
}

function numberOrUndefined(s: string | undefined): number | undefined {
  return s !== undefined && /^\d+$/.test(s) ? Number(s) : undefined;
}

function addFile(acc: Acc, target: string, cwd: string | undefined, reason: string): void {
  const resolved = resolvePath(target, cwd);
  if (resolved !== undefined && isScratch(resolved)) return;
  acc.reasons.push(reason);
  acc.files.push(resolved ?? target);
  if (resolved === undefined) acc.complete = false;
}

function unknownEffect(acc: Acc, reason: string): void {
  acc.reasons.push(reason);
  acc.complete = false;
}

function merge(acc: Acc, inner: CommandClass): void {
  acc.reasons.push(...inner.reasons);
  acc.files.push(...inner.file_targets);
  acc.network.push(...inner.network_targets);
  if (!inner.targets_complete) acc.complete = false;
}

function dedupeNetwork(targets: readonly NetworkTarget[]): NetworkTarget[] {
  const seen = new Map<string, NetworkTarget>();
  for (const t of targets) seen.set(`${t.host}:${t.port ?? ''}`, t);
  return [...seen.values()];
}
