/**
 * `gen-gold --tracer ebpf` (its native backend, ab-ebpf) derives the same
 * gold as strace on the starter tasks: each oracle runs twice, once under each tracer (in two containers,
 * at once), and every derived set — required, support, directories,
 * ephemeral, implicit, scored roots, sensitive, network — must be equal;
 * only the provenance differs, and it names the tracer. Skipped, with the
 * probe's reason, where eBPF cannot run. The ci tier runs two fast oracles;
 * the full tier every starter task. An oracle that leaves a service running
 * (AuthBench's nginx-request-logging, from the dev dataset where it is found)
 * keeps it through its validator under eBPF too, as under strace.
 */
import { access } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ENV, readEnv } from '../../core/index.ts';
import { connectDocker, type DockerEngine } from '../../docker/index.ts';
import { diffGold, renderGoldDiff, type GoldFile } from '../../gold/index.ts';
import { engineFacts, generateGold, resolveTracer, type GenerateResult } from '../../oracle/index.ts';
import { ensureEbpfTracer, gatherEbpfFacts, judgeEbpf } from '../../sandbox/ebpf/index.ts';
import { discoverTasks, loadTask, type Task } from '../../task-format/index.ts';
import { buildTaskImage } from '../../taskenv/index.ts';
import { runCli } from '../cli.ts';
import { FULL_TIER } from './tier.ts';

/** Fast oracles (a few seconds each) for the ci tier. */
const CI_TASKS = ['log-triage', 'ini-config-repair'];

const engine: DockerEngine = await connectDocker();
const verdict = judgeEbpf(await gatherEbpfFacts({ engine: await engineFacts(engine) }), 'native');
const reason = verdict.available ? '' : ` (skipped: ${verdict.reason})`;
const native = verdict.available ? await ensureEbpfTracer(engine) : undefined;
const bpftrace = judgeEbpf(await gatherEbpfFacts({ engine: await engineFacts(engine) }), 'bpftrace');
const starter: Task[] = await Promise.all((await discoverTasks('tasks')).map((dir) => loadTask(dir)));
const tasks = FULL_TIER ? starter : starter.filter((t) => CI_TASKS.includes(t.id));
const DATASET = resolve(fileURLToPath(new URL('../..', import.meta.url)), readEnv(ENV.AUTHBENCH_DEV_DATASET) ?? '../shared/datasets/authbench-dev');
const NGINX = join(DATASET, 'tasks', 'nginx-request-logging');
const HAVE_NGINX = await access(join(NGINX, 'task.toml')).then(
  () => true,
  () => false,
);
if (!HAVE_NGINX) process.stderr.write(`[ebpf-gold.test] SKIPPED the service oracle: no nginx-request-logging at ${NGINX} (set ${ENV.AUTHBENCH_DEV_DATASET})\n`);

/** The gold without its provenance: what a policy is scored and enforced against. */
function sets(gold: GoldFile): Omit<GoldFile, 'provenance'> {
  const { provenance: _provenance, ...rest } = gold;
  return rest;
}

function errors(r: GenerateResult): string[] {
  return r.problems.filter((p) => p.severity === 'error').map((p) => p.message);
}

describe(`gen-gold --tracer ebpf derives strace's gold on the starter tasks${reason}`, () => {
  it.skipIf(!verdict.available).each(tasks.map((t) => [t.id, t] as const))(
    '%s: identical derived sets',
    async (_id, task) => {
      const image = await buildTaskImage(engine, task);
      const [strace, ebpf] = await Promise.all([
        generateGold(engine, task, image, { sufficiency: false, tracer: resolveTracer('strace', undefined, false) }),
        generateGold(engine, task, image, { sufficiency: false, tracer: resolveTracer('ebpf', verdict, false, native) }),
      ]);
      const diff = renderGoldDiff(diffGold(strace.gold, ebpf.gold), task.id);
      expect(errors(ebpf), diff).toEqual([]);
      expect(ebpf.gold.provenance).toMatchObject({ tracer: 'ebpf', ebpf_backend: 'native', ab_ebpf_version: expect.stringMatching(/^[0-9a-f]{16}$/) as unknown });
      expect(strace.gold.provenance).toMatchObject({ tracer: 'strace', strace_version: expect.stringMatching(/^\d+\.\d+/) as unknown });
      // A non-trivial oracle: two empty golds would be equal too.
      expect(ebpf.gold.required.read.length + ebpf.gold.required.write.length, diff).toBeGreaterThan(0);
      expect(sets(ebpf.gold), diff).toEqual(sets(strace.gold));
    },
    300_000,
  );
});

describe(`gen-gold --tracer ebpf with an oracle that leaves a service running${reason}`, () => {
  it.skipIf(!verdict.available || !HAVE_NGINX)(
    'nginx-request-logging: the service serves its validator, traced, and the gold is strace\'s',
    async () => {
      const task = await loadTask(NGINX);
      const image = await buildTaskImage(engine, task);
      const [strace, ebpf] = await Promise.all([
        generateGold(engine, task, image, { sufficiency: true, tracer: resolveTracer('strace', undefined, false) }),
        generateGold(engine, task, image, { sufficiency: true, tracer: resolveTracer('ebpf', verdict, false, native) }),
      ]);
      const diff = renderGoldDiff(diffGold(strace.gold, ebpf.gold), task.id);
      expect(errors(strace), diff).toEqual([]);
      expect(errors(ebpf), diff).toEqual([]);
      // The validator passed because nginx still ran; its writes to the access log are the oracle's.
      expect(ebpf.sufficiency?.utility.passed, diff).toBe(true);
      expect(ebpf.gold.required.write.some((p) => p.includes('nginx')), diff).toBe(true);
      expect(sets(ebpf.gold), diff).toEqual(sets(strace.gold));
    },
    600_000,
  );
});

describe(`gen-gold --tracer ebpf --ebpf-backend bpftrace${bpftrace.available ? '' : ` (skipped: ${bpftrace.reason})`}`, () => {
  it.skipIf(!bpftrace.available)(
    'checks the stored gold of log-triage through bpftrace, and says which backend traced',
    async () => {
      const r = await runCli('gen-gold', 'log-triage', '--check', '--tracer', 'ebpf', '--ebpf-backend', 'bpftrace', '--no-sufficiency', '--json');
      expect(r.code, r.err).toBe(0);
      const out = JSON.parse(r.out) as { tasks: { task: string; action: string }[]; tracer: { kind: string; backend?: string } };
      expect(out.tracer).toMatchObject({ kind: 'ebpf', backend: 'bpftrace' });
      expect(out.tasks).toEqual([expect.objectContaining({ task: 'log-triage', action: 'checked' })]);
    },
    300_000,
  );
});
