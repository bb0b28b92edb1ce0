/**
 * The page's scripts, read from disk when a report is rendered so the HTML
 * carries them inline and needs no network when viewed: the plotting library
 * from node_modules (Vega-Lite compiles the specs, Vega renders them,
 * vega-embed wires both to a div), and the page's own script, viewer/viewer.js
 * (embeds the plots, draws the trace viewer), exactly as it was type-checked
 * and linted — it needs no build step.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AuthbenchError } from '../core/index.ts';

export interface ScriptAsset {
  name: string;
  version: string;
  code: string;
}

/** Load order matters: vega-embed's browser build expects the globals `vega` and `vegaLite`. */
const BUNDLES = [
  { name: 'vega', file: 'vega.min.js' },
  { name: 'vega-lite', file: 'vega-lite.min.js' },
  { name: 'vega-embed', file: 'vega-embed.min.js' },
] as const;

async function bundle(name: string, file: string): Promise<ScriptAsset> {
  let entry: string;
  try {
    entry = fileURLToPath(import.meta.resolve(name));
  } catch (e) {
    throw new AuthbenchError('INTERNAL', `cannot find the ${name} package`, { hint: 'run `npm install` in the authbench folder', cause: e });
  }
  // Every one of the three packages keeps its entry and its browser build in build/.
  const buildDir = dirname(entry);
  try {
    const [code, pkg] = await Promise.all([readFile(join(buildDir, file), 'utf8'), readFile(join(buildDir, '..', 'package.json'), 'utf8')]);
    const version = (JSON.parse(pkg) as { version?: unknown }).version;
    return { name, version: typeof version === 'string' ? version : 'unknown', code };
  } catch (e) {
    throw new AuthbenchError('INTERNAL', `cannot read the browser build of ${name} (${file})`, { file: join(buildDir, file), hint: 'reinstall with `npm install`', cause: e });
  }
}

export async function loadPlotAssets(): Promise<ScriptAsset[]> {
  return Promise.all(BUNDLES.map((b) => bundle(b.name, b.file)));
}

const VIEWER = new URL('./viewer/viewer.js', import.meta.url);

export async function loadViewerScript(): Promise<string> {
  try {
    return await readFile(VIEWER, 'utf8');
  } catch (e) {
    throw new AuthbenchError('INTERNAL', 'cannot read the report page script', { file: fileURLToPath(VIEWER), cause: e });
  }
}
