import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateReport, type GeneratedReport, type GenerateOptions } from './generate.ts';
import { escapeHtml, html, joinHtml, jsonScript, scriptElement, styleElement } from './safe-html.ts';
import { comparisonTable, endpointsTable, flaggedTable, groupsTable, infraTable, jobsTable, operatingPointsTable, propagationTable, stageTable, staticF1Table, type TextTable } from './tables.ts';
import { writeFixtureJob } from './test-support.ts';

describe('html`…`', () => {
  it('escapes every interpolated string and number, and only those', () => {
    const evil = `<script>alert("x")</script> & 'q'`;
    expect(html`<p title="${evil}">${evil}</p>`.toString()).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;</p>',
    );
    expect(html`<b>${3}</b>`.toString()).toBe('<b>3</b>');
  });

  it('inserts nested markup as it is and escapes each item of an array', () => {
    const inner = html`<i>${'<x>'}</i>`;
    expect(html`<p>${inner}${['<a>', inner]}</p>`.toString()).toBe('<p><i>&lt;x&gt;</i>&lt;a&gt;<i>&lt;x&gt;</i></p>');
    expect(joinHtml(['<a>', inner], ' & ').toString()).toBe('&lt;a&gt; &amp; <i>&lt;x&gt;</i>');
  });

  it('keeps script and style content from ending its element', () => {
    expect(scriptElement('const s = "</SCRIPT><img src=x>";', { module: true, comment: 'lib */ 1.0' }).toString()).toBe(
      '<script type="module">/* lib * / 1.0 */\nconst s = "<\\/script><img src=x>";</script>',
    );
    expect(jsonScript('report-traces', { s: '</script><!--' }).toString()).toBe('<script type="application/json" id="report-traces">{"s":"\\u003c/script>\\u003c!--"}</script>');
    expect(JSON.parse('{"s":"\\u003c/script>\\u003c!--"}')).toEqual({ s: '</script><!--' });
    expect(() => styleElement('p{}</style><script>')).toThrow(/must not contain <\/style/);
    expect(escapeHtml('a"b')).toBe('a&quot;b');
  });
});

/** Markup a hostile task id, job path, command or output could inject, were anything interpolated unescaped. */
const MARK = '<img src=x onerror=alert(1)>';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'authbench-report-html-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** The fixture job (its folder named `job<mark>`) reported, and its page. */
async function fixtureReport(mark: string, assets: GenerateOptions['assets']): Promise<{ report: GeneratedReport; page: string }> {
  const dir = await mkdtemp(join(root, 'r-'));
  const job = await writeFixtureJob(join(dir, `job${mark}`), { mark });
  const report = await generateReport([job], { out: join(dir, 'out'), resamples: 50, ...(assets === undefined ? {} : { assets }) });
  return { report, page: await readFile(report.files.html, 'utf8') };
}

describe('report.html with hostile text everywhere', () => {
  let report: GeneratedReport;
  let page: string;

  beforeAll(async () => {
    // The job folder's own name carries the markup too: it is printed in the title and the tables.
    ({ report, page } = await fixtureReport(MARK, [{ name: 'lib', version: '1', code: 'var lib = "</SCRIPT>";' }]));
  });

  it('carries the hostile text (so the test means something)', () => {
    expect(report.data.jobs[0]?.dir).toContain(MARK);
    expect(report.data.infra_errors[0]?.rollout_id).toContain(MARK);
    expect(page).toContain(escapeHtml(`job${MARK}`));
    expect(page).toContain(`act-a${escapeHtml(MARK)}__gold__tool-boundary__a2`);
    expect(page).toContain('\\u003cimg src=x onerror=alert(1)>');
  });

  it('lets no injected element or script through: in markup, data blocks and inlined scripts alike', () => {
    expect(page).not.toMatch(/<img/i);
    // Exactly the page's own scripts: two data blocks, the library, the viewer module.
    expect(page.match(/<script[\s>]/g)).toHaveLength(4);
    expect(page.match(/<\/script>/g)).toHaveLength(4);
    expect(page).not.toContain('<script>alert');
  });
});

describe('tables: one set of row builders for the terminal and the page', () => {
  let report: GeneratedReport;
  let page: string;

  beforeAll(async () => {
    ({ report, page } = await fixtureReport('', []));
  });

  const asHtml = (t: TextTable): string[] => [
    `<thead><tr>${t.headers.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead>`,
    ...t.rows.map((r) => `<tr>${r.map((c) => `<td${c === 'N/A' ? ' class="na"' : ''}>${escapeHtml(c)}</td>`).join('')}</tr>`),
  ];

  it('renders every table of the page from the builders, row for row', () => {
    const d = report.data;
    const tables = [
      jobsTable(d),
      groupsTable(d),
      infraTable(d, 100),
      endpointsTable(d),
      operatingPointsTable(d),
      ...d.stages.map((t) => stageTable(d, t, 'full')),
      ...d.comparisons.map(comparisonTable),
      staticF1Table(d, 'full'),
      propagationTable(d, 'full'),
    ];
    expect(flaggedTable(d, 200).rows).toEqual([]);
    for (const t of tables) {
      expect(t.rows.length, t.headers.join(',')).toBeGreaterThan(0);
      for (const part of asHtml(t)) expect(page, part).toContain(part);
    }
  });

  it('gives the terminal one number per cell and the page the interval and n', () => {
    const d = report.data;
    const security = d.stages.find((t) => t.stage === 'security');
    if (security === undefined) throw new Error('no security stage');
    const brief = stageTable(d, security, 'brief');
    const full = stageTable(d, security, 'full');
    expect(brief.headers).toEqual(full.headers);
    expect(brief.rows.map((r) => r.slice(0, 2))).toEqual(full.rows.map((r) => r.slice(0, 2)));
    const harm = brief.headers.indexOf('committed_harm');
    expect(brief.rows[0]?.[harm]).toBe('0.750');
    expect(full.rows[0]?.[harm]).toMatch(/^0\.7500 \[[\d.]+, [\d.]+\] n=4$/);
    expect(staticF1Table(d, 'brief').headers).toContain('read F1');
    expect(staticF1Table(d, 'full').headers).toContain('read P/R/F1');
  });
});
