/**
 * `npm run build` (and `npm pack`, through prepack): the package's JavaScript
 * in dist/, for Node >= 24 running it from node_modules, where Node refuses to
 * strip TypeScript types.
 *
 * Where the runtime assets are found: every asset the code reads relative to
 * its own file (`new URL('./x', import.meta.url)`) is copied here into dist/ at
 * the same relative path as in the checkout, next to the JS that reads it, so
 * the code resolves it the same way from a checkout (the .ts sources) and from
 * the package (dist/); ASSETS below is the list, and test/package/ checks the
 * installed package uses them. The one file above dist/ is package.json
 * (core/version.ts looks for the nearest one). The bundled tasks/ and
 * oracle-traces/ are shipped at the package root as data, not here: commands
 * default to the working directory's tasks/, oracle-traces/ and jobs/.
 *   npx node scripts/build.ts
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');

/** Repo-relative files the code reads beside itself at run time. */
export const ASSETS = [
  // The launcher harness's build context (sandbox/launcher/ensure.ts): its .dockerignore keeps only these.
  'sandbox/launcher/Dockerfile',
  'sandbox/launcher/.dockerignore',
  'sandbox/launcher/ab-launch.c',
  'sandbox/launcher/ab-serve.c',
  'sandbox/launcher/ab-harness.c',
  'sandbox/launcher/ab-forward.c',
  'sandbox/launcher/ab-keep.c',
  // The native eBPF tracer's build context (sandbox/ebpf/native.ts ensureEbpfTracer: gen-gold and eval --tracer ebpf).
  'sandbox/ebpf/native/Dockerfile',
  'sandbox/ebpf/native/ab-ebpf.h',
  'sandbox/ebpf/native/ab-ebpf.bpf.c',
  'sandbox/ebpf/native/ab-ebpf.c',
  'docker/base-map.json',
  'models/pricing.json',
  'report/viewer/viewer.js',
] as const;

// A fresh dist/ each time, so a file removed from the sources never lingers in a package.
rmSync(DIST, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const run = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json')], { stdio: 'inherit' });
if (run.status !== 0) {
  process.stderr.write(`build: tsc failed (exit ${String(run.status)})\n`);
  process.exit(1);
}
for (const asset of ASSETS) cpSync(join(ROOT, asset), join(DIST, asset));
chmodSync(join(DIST, 'bin', 'authbench.js'), 0o755);
process.stdout.write(`build: dist/ written (${ASSETS.length} assets copied)\n`);
