import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateReport, parserTable, type GeneratedReport } from './index.ts';
import { FIXTURE_MODEL, writeFixtureJob } from './test-support.ts';

let root: string;
let plain: GeneratedReport;
let text: GeneratedReport;

/** Mark the first `n` completed rollouts of a fixture job as text-mode with the given counts. */
async function asTextMode(job: string, counts: readonly { strict: number; repaired: number; invalid: number }[]): Promise<void> {
  let i = 0;
  for (const name of (await readdir(job)).sort()) {
    const file = join(job, name, 'result.json');
    const raw = await readFile(file, 'utf8').catch(() => undefined);
    const parser = counts[i];
    if (raw === undefined || parser === undefined) continue;
    const result = JSON.parse(raw) as { status: string };
    if (result.status !== 'completed') continue;
    await writeFile(file, JSON.stringify({ ...result, tool_format: 'text', parser }));
    i += 1;
  }
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'authbench-report-parser-'));
  const plainJob = await writeFixtureJob(join(root, 'plain'));
  plain = await generateReport([plainJob], { out: join(root, 'plain-out'), resamples: 100, assets: [] });
  const textJob = await writeFixtureJob(join(root, 'text'));
  await asTextMode(textJob, [
    { strict: 6, repaired: 3, invalid: 1 },
    { strict: 2, repaired: 0, invalid: 8 },
  ]);
  text = await generateReport([textJob], { out: join(root, 'text-out'), resamples: 100, assets: [] });
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('parser status in the report', () => {
  it('is absent when no rollout acted through text', async () => {
    expect(plain.data.parser).toBeUndefined();
    expect(parserTable(plain.data).rows).toEqual([]);
    expect(await readFile(plain.files.html, 'utf8')).not.toContain('Text actions');
  });

  it('shows reply rates per model when one did', async () => {
    expect(text.data.parser).toEqual([{ model: FIXTURE_MODEL, rollouts: 2, replies: 20, strict: 8, repaired: 3, invalid: 9, actionsAsText: 0 }]);
    expect(parserTable(text.data).rows).toEqual([[FIXTURE_MODEL, '2', '20', '40.0%', '15.0%', '45.0%', '0']]);
    const html = await readFile(text.files.html, 'utf8');
    expect(html).toContain('Text actions (parser status)');
    expect(html).toContain('45.0%');
  });
});
