/**
 * report.html in a real browser: headless Chromium loads the page from a
 * file (no server, no network), runs its inlined scripts, and we read the
 * DOM it ends with: every section is there, every plot container holds the
 * SVG Vega drew, and the trace viewer rendered proposals — with markup in
 * the job's path, every task id and a command staying text. Needs no Docker;
 * it lives in the serial project because a browser on a shared 2-core
 * machine is slow and heavy. Chromium comes from scripts/setup-host.sh: in
 * CI its absence fails the test; elsewhere it is skipped.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENV, readEnv } from '../../core/index.ts';
import { generateReport, reportPlots, SECTION_IDS, type GeneratedReport } from '../../report/index.ts';
import { writeFixtureJob } from '../../report/test-support.ts';

const run = promisify(execFile);

function onPath(name: string): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

const chromium = onPath('chromium') ?? onPath('chromium-browser');

/** Markup a hostile task id, job path or command would inject, were anything put into the page unescaped. */
const MARK = '<img src=x onerror=alert(1)>';
const inCi = readEnv(ENV.CI) !== undefined;

/** The DOM after the page's scripts ran. Virtual time lets Vega's timers finish before the dump. */
async function dumpDom(file: string, profile: string): Promise<string> {
  if (chromium === undefined) throw new Error('chromium is not installed (scripts/setup-host.sh installs it)');
  const { stdout } = await run(
    chromium,
    [
      '--headless',
      // Root (CI, containers) cannot use Chromium's sandbox; the page is our own file.
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      `--user-data-dir=${profile}`,
      '--virtual-time-budget=20000',
      '--dump-dom',
      pathToFileURL(file).href,
    ],
    { maxBuffer: 64 * 1024 * 1024, timeout: 180_000 },
  );
  return stdout;
}

describe.skipIf(!inCi && chromium === undefined)('report.html in headless Chromium', () => {
  let root: string;
  let report: GeneratedReport;
  let dom: string;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'authbench-report-html-'));
    const job = await writeFixtureJob(join(root, `job${MARK}`), { mark: MARK });
    report = await generateReport([job], { out: join(root, 'out'), resamples: 300 });
    dom = await dumpDom(report.files.html, join(root, 'profile'));
  }, 300_000);

  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('has every section', () => {
    for (const id of SECTION_IDS) expect(dom, id).toMatch(new RegExp(`<section id="${id}"`));
  });

  it('opens with the headline panel: one row per defense next to the operating-points plot', () => {
    const sections = [...dom.matchAll(/<section id="([^"]+)"/g)].map((m) => m[1]);
    expect(sections[0]).toBe('headline');
    const panel = dom.slice(dom.indexOf('<section id="headline"'), dom.indexOf('</section>', dom.indexOf('<section id="headline"')));
    // No other table comes before it in the page.
    expect(dom.indexOf('<table')).toBe(dom.indexOf('<table class="headline"'));
    const table = panel.slice(panel.indexOf('<table class="headline"'), panel.indexOf('</table>'));
    const rows = [...table.matchAll(/<tr><td>([^<]*)<\/td>/g)].map((m) => m[1]);
    expect(rows).toEqual(report.data.defenses);
    // The plot beside it was drawn, and the long tables after it are folded.
    expect(panel).toMatch(/id="plot-operating-points"[\s\S]*<svg[^>]*class="marks"/);
    expect(dom.slice(dom.indexOf('<section id="stages"'))).toMatch(/<details><summary>[^<]+<\/summary><table>/);
  });

  it('rendered every plot as SVG inside its container', () => {
    expect(dom).toContain('data-plots="rendered"');
    const plots = reportPlots(report.data);
    // The fixture has data for every plotted section.
    expect(new Set(plots.map((p) => p.section))).toEqual(new Set(['operating-points', 'stages', 'funnel', 'comparisons', 'static-f1', 'propagation']));
    for (const plot of plots) {
      const start = dom.indexOf(`id="plot-${plot.id}"`);
      expect(start, plot.id).toBeGreaterThan(-1);
      const inside = dom.slice(start, dom.indexOf('</figure>', start));
      expect(inside, plot.id).toMatch(/<svg[^>]*class="marks"/);
      // Marks were drawn, not just an empty canvas: bars, points or rules are paths/lines in the SVG.
      expect(inside, plot.id).toMatch(/<path|<line/);
    }
  });

  it('rendered the trace viewer with decisions and taint marks', () => {
    const viewer = dom.slice(dom.indexOf('<section id="trace-viewer"'), dom.indexOf('<section id="how-to-read"'));
    expect(viewer).toMatch(/<option value="\d+">/);
    expect(viewer).toContain('class="proposal tainted');
    expect(viewer).toMatch(/decision: allow · rule \S+\/allow/);
    expect(viewer).toContain('write /app/out.txt');
    // Trace text stays text: the fixture's `<script>` output is escaped in the DOM.
    expect(viewer).not.toContain('<script>alert(1)</script>');
  });

  it('keeps hostile task ids, paths and commands as text after every script ran', () => {
    const escaped = '&lt;img src=x onerror=alert(1)&gt;';
    // No element was made from them anywhere in the page (the DOM would hold an <img>); script
    // bodies are left out of the search (vega-embed's code mentions <img> in a string).
    expect(dom.replaceAll(/<script\b[^>]*>[\s\S]*?<\/script>/g, '')).not.toMatch(/<img/i);
    expect(dom).toContain(`<title>authbench report — ${join(root, 'job')}${escaped}</title>`);
    const viewer = dom.slice(dom.indexOf('<section id="trace-viewer"'), dom.indexOf('<section id="how-to-read"'));
    expect(viewer).toContain(`">act-a${escaped} · `);
    expect(viewer).toContain(`<pre>cat /app/inbox/note.md &gt; /app/out.txt # ${escaped}</pre>`);
  });
});
