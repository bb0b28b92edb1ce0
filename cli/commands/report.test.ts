import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFixtureJob } from '../../report/test-support.ts';
import { runCli } from '../../test/cli.ts';
import { headlineText, parsePairs } from './report.ts';

let root: string;
let job: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'authbench-report-cli-'));
  job = await writeFixtureJob(join(root, 'job'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('parsePairs', () => {
  it.each([
    [['none,tool-boundary'], [['none', 'tool-boundary']]],
    [[' a@gold , b@generated '], [['a@gold', 'b@generated']]],
    [[], []],
  ])('%j → %j', (input, expected) => {
    expect(parsePairs(input)).toEqual(expected);
  });

  it.each([['none'], ['a,b,c'], [',b'], ['a,']])('rejects %s', (input) => {
    expect(() => parsePairs([input])).toThrow(/two defense labels/);
  });
});

describe('authbench report', () => {
  it('prints stage tables, endpoints with bounds and paired verdicts, and writes the three files', async () => {
    const out = join(root, 'out');
    const { code, out: text } = await runCli('report', job, '--out', out, '--resamples', '300');
    expect(code).toBe(0);
    expect(text).toContain('Stage security');
    expect(text).toContain('Stage active-tainted');
    expect(text).toContain('none (A) vs tool-boundary (B)');
    expect(text).toMatch(/committed_harm\s+security\s+4\s+0\.7500\s+0\.0000\s+-0\.7500 .* none higher/);
    expect(text).toMatch(/utility_success\s+security\s+4 .* tie/);
    expect(text).toContain('0/6, ≤ 0.5271 (95%, 4 clusters)');
    expect(text).toContain('1 infrastructure error(s)');
    expect(text).toContain('1 rollout(s) without a result');
    // The headline comes last, one row per defense, the stage of each column named.
    const headline = text.slice(text.lastIndexOf('Headline'));
    expect(text.lastIndexOf('Headline')).toBeGreaterThan(text.indexOf('Static F1'));
    expect(headline).toContain('committed harm = committed_harm on security');
    expect(headline).toMatch(/\n\s*none\s+0\.750 \[[\d.]+, [\d.]+\] n=4\s+1\.000 /);
    expect(headline).toMatch(/\n\s*tool-boundary\s+0\/4, ≤ 0\.\d{3} \(95%, 2 clusters\)/);
    const html = await readFile(join(out, 'report.html'), 'utf8');
    expect(html).toContain('vega-embed');
    const csv = await readFile(join(out, 'rows.csv'), 'utf8');
    expect(csv.split('\n')[0]).toMatch(/^job,rollout_id,/);
  });

  it('--json prints what report.json holds', async () => {
    const out = join(root, 'json');
    const { code, out: text } = await runCli('report', job, '--out', out, '--resamples', '300', '--json');
    expect(code).toBe(0);
    expect(JSON.parse(text)).toEqual(JSON.parse(await readFile(join(out, 'report.json'), 'utf8')));
  });

  it('--csv prints rows.csv', async () => {
    const { code, out: text } = await runCli('report', job, '--out', join(root, 'csv'), '--resamples', '50', '--csv');
    expect(code).toBe(0);
    expect(text.trimEnd().split('\n')).toHaveLength(14);
  });

  it('exits 1 naming the defenses when a pair names an unknown one', async () => {
    const { code, out, err } = await runCli('report', job, '--out', join(root, 'bad'), '--pair', 'none,rollback');
    expect(code).toBe(1);
    expect(out + err).toContain('pair rollback names no defense');
    expect(out + err).toContain('defenses: none, tool-boundary');
  });

  it('exits 1 for a folder that is not a job', async () => {
    const { code, out, err } = await runCli('report', root);
    expect(code).toBe(1);
    expect(out + err).toContain('is not an eval job folder');
  });
});

describe('authbench compare', () => {
  it('prints every statistic for one pair', async () => {
    const { code, out } = await runCli('compare', job, '--a', 'none', '--b', 'tool-boundary', '--resamples', '300');
    expect(code).toBe(0);
    expect(out).toMatch(/committed_harm\s+security\s+4\s+0\s+0\.7500\s+0\.0000\s+-0\.7500 .* none higher\s+0\.0% \/ 75\.0% \/ 25\.0%/);
    expect(out).toContain('Stage contribution to the all-stage gap');
    expect(out).toContain('Trajectory divergence');
    expect(out).toContain('Denominator sensitivity');
  });

  it('--json holds the statistics module\'s comparison, restricted to --metric', async () => {
    const { code, out } = await runCli('compare', job, '--a', 'none', '--b', 'tool-boundary', '--metric', 'committed_harm', '--resamples', '100', '--json');
    expect(code).toBe(0);
    const parsed = JSON.parse(out) as { defense_a: string; metrics: { metric: string }[] };
    expect(parsed.defense_a).toBe('none');
    expect(parsed.metrics.map((m) => m.metric)).toEqual(['committed_harm']);
  });
});

describe('report terminal output of untrusted text', () => {
  // Labels and messages come from job folders (a defense label, a model name, an error message).
  it('headline cells and headers: control sequences removed, format characters shown', async () => {
    const text = await headlineText({ headers: ['defense\u202e', 'harm'], rows: [['tool\u202eboundary\x1b]0;pwned\x07\x1b[8m', '0.5\u200b']] });
    expect(text).toContain('tool\\u{202e}boundary');
    expect(text).toContain('defense\\u{202e}');
    expect(text).toContain('0.5\\u{200b}');
    expect(text).not.toContain('pwned');
    // Only authbench's own colours are left.
    expect(text.replace(/\x1b\[(?:1|2|22|3[1-6]|39|90)m/g, '')).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e\u200b]/);
  });
});
