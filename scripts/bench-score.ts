/**
 * Static-scoring throughput: a synthetic task with ~5k candidates per axis,
 * N model-like random policies (tens of entries each, globs, /bin spellings,
 * missing paths), scored in one batch.
 *
 *   npx node scripts/bench-score.ts [--size 5000] [--policies 2000] [--entries 30] [--seed 1]
 */
import { parseArgs } from 'node:util';
import { buildCandidateSnapshot, prepareScoring, scorePrepared } from '../score/index.ts';
import { prng, randomPolicy, syntheticTask } from '../score/test-support.ts';

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '5000' },
    policies: { type: 'string', default: '2000' },
    entries: { type: 'string', default: '30' },
    seed: { type: 'string', default: '1' },
  },
});
const size = Number(values.size);
const count = Number(values.policies);
const entries = Number(values.entries);
const seed = Number(values.seed);

let t = performance.now();
const task = syntheticTask({ size, seed });
const candidates = buildCandidateSnapshot(task.snapshot, task.reference.scored_roots);
const snapshotMs = performance.now() - t;

const rnd = prng(seed + 1);
const policies = Array.from({ length: count }, () => randomPolicy(task, rnd, entries));

t = performance.now();
const prepared = prepareScoring(task.reference, candidates);
const prepareMs = performance.now() - t;

t = performance.now();
let f1 = 0;
for (const policy of policies) f1 += scorePrepared(policy, prepared).macro_f1;
const scoreMs = performance.now() - t;
const perSecond = count / (scoreMs / 1000);

const axes = `read ${candidates.files.read.length}, write ${candidates.files.write.length}, execute ${candidates.files.execute.length}`;
const meanEntries = policies.reduce((n, p) => n + p.read.length + p.write.length + p.execute.length, 0) / count;
process.stdout.write(
  [
    `candidates per axis: ${axes}`,
    `policies: ${count}, mean entries per policy: ${meanEntries.toFixed(1)}, mean macro F1: ${(f1 / count).toFixed(3)}`,
    `candidate snapshot: ${snapshotMs.toFixed(0)} ms, prepare reference: ${prepareMs.toFixed(0)} ms, scoring: ${scoreMs.toFixed(0)} ms`,
    `policies scored per second: ${Math.round(perSecond)} (target ≥ 1000)`,
    '',
  ].join('\n'),
);
