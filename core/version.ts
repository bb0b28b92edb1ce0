import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/** authbench's own version, recorded in every artifact it writes. */
export const AUTHBENCH_VERSION: string = pkg.version;
