import { existsSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AuthbenchError } from './errors.ts';

/**
 * authbench's own package.json: one folder up from the sources in a checkout
 * (core/), two from the compiled package (dist/core/, scripts/build.ts).
 */
const PACKAGE_JSON = [new URL('../package.json', import.meta.url), new URL('../../package.json', import.meta.url)].find((url) => existsSync(url));
if (PACKAGE_JSON === undefined) throw new AuthbenchError('INTERNAL', "cannot find authbench's package.json", { hint: 'reinstall authbench' });

const pkg = JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as {
  version: string;
};

/** The folder of authbench's package.json: a checkout's root, or the installed package's. */
export const PACKAGE_ROOT: string = dirname(fileURLToPath(PACKAGE_JSON));

/** authbench's own version, recorded in every artifact it writes. */
export const AUTHBENCH_VERSION: string = pkg.version;
