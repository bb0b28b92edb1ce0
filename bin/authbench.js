#!/usr/bin/env node
// The `authbench` command (package.json bin), plain JavaScript so that it runs anywhere.
// From a checkout it runs the TypeScript sources (bin/authbench.ts; Node strips the types), so
// they are never stale; from the package, which ships no sources, the compiled dist/ (Node refuses
// to strip types under node_modules; scripts/build.ts). The Node version is checked first: on an
// older Node the modules fail to parse (`await using`) with a SyntaxError that names no reason.
import { existsSync } from 'node:fs';

const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(`authbench needs Node >= 24; this is Node ${process.versions.node} (${process.execPath}).\n`);
  process.exit(125);
}

const source = new URL('./authbench.ts', import.meta.url);
await import(existsSync(source) ? source.href : new URL('../dist/bin/authbench.js', import.meta.url).href);
