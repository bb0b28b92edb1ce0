/**
 * Which Docker tier runs (AUTHBENCH_TEST_TIER, set by scripts/run-tests.ts):
 * `ci` — `make test`, every module end to end on a sample; `full` — `make
 * test-full`, everything. Run directly, vitest gets the sample.
 */
import { ENV, readEnv } from '../../core/index.ts';

export const FULL_TIER = readEnv(ENV.AUTHBENCH_TEST_TIER) === 'full';
