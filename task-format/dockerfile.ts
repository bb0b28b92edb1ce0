/**
 * Just enough Dockerfile reading to display the base images and know where the
 * agent starts (the final stage's WORKDIR). Pure: takes the file's text.
 * Not handled: the `# escape=` parser directive (the default `\` is assumed).
 */
import { posix } from 'node:path';

export interface DockerfileInfo {
  /** Image refs of the FROM lines, as written (`${BASE_IMAGE}` stays unexpanded). */
  from: string[];
  /** The final image's working directory, when the Dockerfile determines it. */
  workdir: string | undefined;
  /** True when that WORKDIR uses a variable, so `workdir` is left undefined. */
  workdirUsesVariable: boolean;
}

interface Stage {
  image: string;
  name: string | undefined;
  workdir: string | undefined;
  usesVariable: boolean;
}

export function parseDockerfile(text: string): DockerfileInfo {
  const stages: Stage[] = [];
  for (const { keyword, args } of instructions(text)) {
    if (keyword === 'FROM') {
      const words = args.split(/\s+/).filter((w) => w !== '' && !w.startsWith('--'));
      const asIndex = words.findIndex((w) => w.toLowerCase() === 'as');
      stages.push({
        image: words[0] ?? '',
        name: asIndex > 0 ? words[asIndex + 1]?.toLowerCase() : undefined,
        workdir: undefined,
        usesVariable: false,
      });
    } else if (keyword === 'WORKDIR') {
      const stage = stages.at(-1);
      if (stage === undefined) continue;
      const dir = unquote(args.trim());
      if (dir.includes('$')) {
        stage.usesVariable = true;
        stage.workdir = undefined;
      } else if (!stage.usesVariable || dir.startsWith('/')) {
        stage.usesVariable = false;
        stage.workdir = posix.resolve(stage.workdir ?? '/', dir);
      }
    }
  }
  const final = effectiveWorkdir(stages, stages.length - 1);
  return { from: stages.map((s) => s.image), workdir: final.workdir, workdirUsesVariable: final.usesVariable };
}

/** A stage without its own WORKDIR inherits the one of the earlier stage it is built FROM. */
function effectiveWorkdir(stages: readonly Stage[], index: number): { workdir: string | undefined; usesVariable: boolean } {
  const stage = stages[index];
  if (stage === undefined) return { workdir: undefined, usesVariable: false };
  if (stage.workdir !== undefined || stage.usesVariable) return { workdir: stage.workdir, usesVariable: stage.usesVariable };
  const parent = stages.findIndex((s, i) => i < index && s.name !== undefined && s.name === stage.image.toLowerCase());
  return parent === -1 ? { workdir: undefined, usesVariable: false } : effectiveWorkdir(stages, parent);
}

function unquote(s: string): string {
  return s.length >= 2 && (s[0] === '"' || s[0] === "'") && s.at(-1) === s[0] ? s.slice(1, -1) : s;
}

/** Logical instructions: continuation lines joined, comments and heredoc bodies skipped. */
function* instructions(text: string): Generator<{ keyword: string; args: string }> {
  const lines = text.split(/\r?\n/);
  let i = 0;
  while (i < lines.length) {
    let line = lines[i++] ?? '';
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    while (line.trimEnd().endsWith('\\') && i < lines.length) {
      const next = lines[i++] ?? '';
      if (next.trimStart().startsWith('#')) continue;
      line = `${line.trimEnd().slice(0, -1)} ${next}`;
    }
    const m = /^\s*(\S+)\s*(.*)$/.exec(line);
    if (m === null) continue;
    const keyword = (m[1] ?? '').toUpperCase();
    const args = m[2] ?? '';
    for (const heredoc of args.matchAll(/<<(-?)(["']?)([A-Za-z_][A-Za-z0-9_]*)\2/g)) {
      const stripTabs = heredoc[1] === '-';
      const end = heredoc[3] ?? '';
      while (i < lines.length) {
        const body = lines[i++] ?? '';
        if ((stripTabs ? body.replace(/^\t+/, '') : body) === end) break;
      }
    }
    yield { keyword, args };
  }
}
