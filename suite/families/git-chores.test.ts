import { describe, expect, it } from 'vitest';
import { drawFor } from '../draw.ts';
import { CHORES, gitChores } from './git-chores.ts';

/** A JSON value the checks bake in as `NAME = json.loads("...")`. */
function baked(checks: string, name: string): unknown {
  const literal = new RegExp(`${name} = json\\.loads\\((".*")\\)`).exec(checks)![1]!;
  return JSON.parse(JSON.parse(literal) as string);
}

/** Replays the build script's commit, tag and checkout lines: subjects on main in order, and tag positions. */
function replay(script: string) {
  const main: string[] = [];
  const tags: Record<string, number> = {};
  let onMain = true;
  for (const line of script.split('\n')) {
    if (line.startsWith('git checkout -q -b ')) onMain = false;
    else if (line === 'git checkout -q main') onMain = true;
    else if (line.startsWith('git tag ')) tags[line.slice(8)] = main.length;
    else if (onMain && line.includes('git commit -q -m ')) main.push(/-m '(.*)'$/.exec(line)![1]!);
  }
  return { main, tags };
}

const script = (files: Record<string, { content: string }>) => Object.entries(files).find(([p]) => p.endsWith('mkrepo.sh'))![1].content;

describe('generated workspaces', () => {
  const workspaces = Array.from({ length: 40 }, (_, i) => gitChores.clean(drawFor(`t/${i}`)));

  it('draw every chore', () => {
    expect(new Set(workspaces.flatMap((w) => w.parameters['chores'] as string[]))).toEqual(new Set(['commit', ...CHORES]));
  });

  it('expect the changelog the build script’s history gives', () => {
    let seen = 0;
    for (const ws of workspaces) {
      const m = /lines\[0\] == "## (v[\d.]+)"\n.* == (\[.*\])/.exec(ws.checks);
      if (m === null) continue;
      seen++;
      const { main, tags } = replay(script(ws.files));
      const from = /commit in `(v[\d.]+)\.\./.exec(ws.instruction)![1]!;
      expect(JSON.parse(m[2]!)).toEqual(main.slice(tags[from], tags[m[1]!]));
      expect(baked(ws.checks, 'MAIN_SUBJECTS')).toEqual(main);
    }
    expect(seen).toBeGreaterThan(0);
  });

  it('pins every date in the build script and the oracle', () => {
    for (const ws of workspaces.slice(0, 5)) {
      for (const line of script(ws.files).split('\n').filter((l) => l.includes('git commit'))) expect(line).toMatch(/GIT_AUTHOR_DATE='\d+ \+0000' GIT_COMMITTER_DATE='\d+ \+0000'/);
      expect(ws.solve).toMatch(/export GIT_AUTHOR_DATE='\d+ \+0000' GIT_COMMITTER_DATE='\d+ \+0000'/);
    }
  });

  it('ships a patch whose first hunk counts match its lines', () => {
    for (let i = 0; i < 10; i++) {
      const ws = gitChores.activeTainted(drawFor(`act/${i}`));
      const patch = ws.files[ws.untrusted![0]!]!.content;
      const [, oldCount, newCount] = /@@ -1,(\d+) \+1,(\d+) @@/.exec(patch)!;
      const body = patch.split(/@@.*@@\n/)[1]!.split(/\n(?:diff --git|-- \n)/)[0]!.split('\n');
      expect(body.filter((l) => !l.startsWith('+')).length).toBe(Number(oldCount));
      expect(body.filter((l) => !l.startsWith('-')).length).toBe(Number(newCount));
    }
  });
});
