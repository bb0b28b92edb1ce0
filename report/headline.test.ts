import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cell, EndpointEntry, HeadlineData } from './build.ts';
import { generateReport, type GeneratedReport } from './generate.ts';
import { jobHeadline } from './headline.ts';
import { HEADLINE_COLUMNS } from './metric-sets.ts';
import { headlineLegend, headlineTable, NOT_RUN_TEXT } from './tables.ts';
import { writeFixtureJob } from './test-support.ts';

let root: string;
let job: string;
let report: GeneratedReport;
const OPTIONS = { resamples: 300, seed: 3 };

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'authbench-headline-'));
  job = await writeFixtureJob(join(root, 'job'));
  report = await generateReport([job], { out: join(root, 'out'), assets: [], ...OPTIONS });
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function column(label: string): number {
  return HEADLINE_COLUMNS.findIndex((c) => c.label === label) + 1;
}

describe('headlineTable on the fixture report', () => {
  it('has one row per defense and the four headline columns, in order', () => {
    const t = headlineTable(report.data);
    expect(t.headers).toEqual(['defense', 'committed harm', 'clean utility', 'authorized tainted completion', 'false-positive blocking']);
    expect(t.rows.map((r) => r[0])).toEqual(report.data.defenses);
    for (const r of t.rows) expect(r).toHaveLength(t.headers.length);
  });

  it("shows the report's own cells with their intervals, each from its one stage", () => {
    const t = headlineTable(report.data);
    const row = (d: string): readonly string[] => t.rows.find((r) => r[0] === d) ?? [];
    const security = report.data.stages.find((s) => s.stage === 'security');
    const harmNone = security?.cells.find((c) => c.defense === 'none' && c.metric === 'committed_harm');
    expect(harmNone?.ci).not.toBeNull();
    // 3 of 4 security rollouts committed harm under none; the interval is the report's bootstrap CI.
    expect(row('none')[column('committed harm')]).toBe(`0.750 [${harmNone?.ci?.lower.toFixed(3)}, ${harmNone?.ci?.upper.toFixed(3)}] n=4`);
    // Clean completion on the clean stage (1 rollout each); tainted completion on active-tainted only.
    expect(row('none')[column('clean utility')]).toBe('1.000 [1.000, 1.000] n=1');
    expect(row('none')[column('authorized tainted completion')]).toBe('1.000 [1.000, 1.000] n=1');
    // tool-boundary's second active-tainted rollout was an infrastructure error: n=1, not a 0 in the mean.
    expect(row('tool-boundary')[column('authorized tainted completion')]).toBe('0.000 [0.000, 0.000] n=1');
    // The fixture never measures false-positive blocking: N/A, not 0.
    expect(row('none')[column('false-positive blocking')]).toBe('N/A');
  });

  it('shows an endpoint with no event as events/n and its one-sided bound, not a [0, 0] interval', () => {
    const t = headlineTable(report.data);
    const cell = t.rows.find((r) => r[0] === 'tool-boundary')?.[column('committed harm')];
    const bound = report.data.endpoints.find((e) => e.defense === 'tool-boundary' && e.stage === 'security' && e.metric === 'committed_harm')?.zero_event;
    expect(bound).toBeDefined();
    expect(cell).toBe(`0/4, ≤ ${bound?.exact.toFixed(3)} (95%, 2 clusters)`);
  });

  it('names each column’s metric and stage in its legend', () => {
    expect(headlineLegend()).toBe(
      'committed harm = committed_harm on security; clean utility = clean_benign_completion on clean; authorized tainted completion = authorized_tainted_action_success on active-tainted; false-positive blocking = false_positive_block_rate on active-tainted',
    );
  });
});

describe('jobHeadline (the end of `eval`)', () => {
  it('prints what `authbench report` prints for the same results and options', () => {
    const results = report.jobs.results.map((l) => l.result);
    expect(jobHeadline(job, results, OPTIONS)).toEqual(headlineTable(report.data));
    // Order of the results does not change a number.
    expect(jobHeadline(job, [...results].reverse(), OPTIONS)).toEqual(headlineTable(report.data));
  });

  it('is empty for a job without a completed rollout', () => {
    const infra = report.jobs.results.map((l) => l.result).filter((r) => r.status === 'infra_error');
    expect(infra.length).toBeGreaterThan(0);
    expect(jobHeadline(job, infra, OPTIONS).rows).toEqual([]);
  });
});

describe('headlineTable rows', () => {
  const cell = (model: string, defense: string, stage: string, metric: string, mean: number | null): Cell => ({
    model,
    defense,
    stage,
    metric,
    n: mean === null ? 0 : 2,
    n_na: mean === null ? 2 : 0,
    mean,
    ci: mean === null ? null : { lower: mean / 2, upper: mean },
    n_clusters: 2,
  });
  const endpoint = (model: string, defense: string): EndpointEntry => ({ model, defense, stage: 'security', metric: 'committed_harm', n: 2, events: 1, mean: 0.5, zero_event: null });

  it('names the model too when several ran, skips a pair that never ran, and says which stage did not run', () => {
    const data: HeadlineData = {
      models: ['m1', 'm2'],
      defenses: ['none', 'taint-only'],
      stages: [
        { stage: 'security', primary: [], metrics: [], cells: [cell('m1', 'none', 'security', 'committed_harm', 0.5), cell('m2', 'none', 'security', 'committed_harm', 0.5)] },
        // taint-only ran with m1 on active-tainted only.
        {
          stage: 'active-tainted',
          primary: [],
          metrics: [],
          cells: [cell('m1', 'taint-only', 'active-tainted', 'authorized_tainted_action_success', 0.2), cell('m1', 'taint-only', 'active-tainted', 'false_positive_block_rate', 0.6)],
        },
      ],
      endpoints: [endpoint('m1', 'none'), endpoint('m2', 'none')],
    };
    expect(headlineTable(data).rows).toEqual([
      ['none · m1', '0.500 [0.250, 0.500] n=2', NOT_RUN_TEXT, NOT_RUN_TEXT, NOT_RUN_TEXT],
      ['taint-only · m1', NOT_RUN_TEXT, NOT_RUN_TEXT, '0.200 [0.100, 0.200] n=2', '0.600 [0.300, 0.600] n=2'],
      ['none · m2', '0.500 [0.250, 0.500] n=2', NOT_RUN_TEXT, NOT_RUN_TEXT, NOT_RUN_TEXT],
    ]);
  });
});
