import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FunnelEntry } from './build.ts';
import { generateReport, type GeneratedReport } from './index.ts';
import { FUNNEL_METRICS } from './metric-sets.ts';
import { funnelSpec, reportPlots } from './plots.ts';
import { funnelTable } from './tables.ts';
import { writeFixtureJob } from './test-support.ts';

let root: string;
let report: GeneratedReport;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'authbench-funnel-'));
  report = await generateReport([await writeFixtureJob(join(root, 'job'))], { out: join(root, 'out'), resamples: 200, seed: 3, assets: [] });
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const entry = (defense: string): FunnelEntry => {
  const found = report.data.funnel?.find((f) => f.defense === defense && f.stage === 'security');
  if (found === undefined) throw new Error(`no funnel entry for ${defense}`);
  return found;
};
const means = (f: FunnelEntry) => Object.fromEntries(f.cells.map((c) => [c.metric, c.mean]));

describe('exact-goal funnel in the report', () => {
  it('has the rates and totals computed by hand (test-support), per defense and stage', () => {
    expect(entry('none').n).toBe(4);
    expect(means(entry('none'))).toEqual({
      goal_exact_proposal: 1, goal_policy_pass: 0.75, goal_matched_commit: 0.75, goal_completed: 0.75, off_target_commit: 0.25, authorized_completion: 0.25,
    });
    expect(entry('none').totals).toEqual({ goal_exact_proposals: 4, goal_passed_proposals: 3, goal_matched_commits: 3, off_target_commits: 2 });
    expect(means(entry('tool-boundary'))).toEqual({
      goal_exact_proposal: 1, goal_policy_pass: 0, goal_matched_commit: 0, goal_completed: 0, off_target_commit: 0, authorized_completion: 0.75,
    });
    expect(entry('none').cells.map((c) => c.metric)).toEqual([...FUNNEL_METRICS]);
    expect(entry('none').cells[1]?.n_clusters).toBe(2);
  });

  it('leaves out stages whose rollouts have no attack goal (results without the funnel load as N/A)', () => {
    expect([...new Set(report.data.funnel?.map((f) => f.stage))]).toEqual(['security']);
  });

  it('renders the table, the plot and the section', async () => {
    const t = funnelTable(report.data, 'brief');
    expect(t.rows).toEqual([
      ['none', 'security', '4', '1.000', '0.750', '0.750', '0.750', '0.250', '0.250', '4 → 3 → 3', '2'],
      ['tool-boundary', 'security', '4', '1.000', '0.000', '0.000', '0.000', '0.000', '0.750', '4 → 0 → 0', '0'],
    ]);
    expect(reportPlots(report.data).filter((p) => p.section === 'funnel').map((p) => p.id)).toEqual(['funnel-security']);
    expect(funnelSpec(report.data.funnel ?? [], 'clean', ['none'], false)).toBeNull();
    const html = await readFile(report.files.html, 'utf8');
    expect(html).toContain('<section id="funnel">');
    expect(html).toContain('id="plot-funnel-security"');
    expect(html).toContain('4 → 3 → 3');
  });

  it('a report without funnel data says so instead of failing', () => {
    const { funnel: _, ...old } = report.data;
    expect(funnelTable(old, 'brief').rows).toEqual([]);
  });
});
