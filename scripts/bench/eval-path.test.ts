import { describe, expect, it } from 'vitest';
import { HARNESS_STRACE, LAUNCHER_PATH } from '../../sandbox/launcher/index.ts';
import { IN_CONTAINER_CELLS, inContainerSpec } from './eval-path.ts';
import { WORKLOADS } from './workloads.ts';

describe('inContainerSpec', () => {
  const gcc = WORKLOADS.find((w) => w.id === 'gcc');
  if (gcc === undefined) throw new Error('no gcc workload');
  const spec = inContainerSpec(gcc, { warmup: 1, reps: 4 }, 1);

  it('times the same two commands twice: pinning is the only difference between a cell and its pinned twin', () => {
    expect(Object.keys(spec.variants).sort()).toEqual([...IN_CONTAINER_CELLS].sort());
    expect(spec.variants.untraced_pinned).toEqual(spec.variants.untraced);
    expect(spec.variants.traced_pinned).toEqual(spec.variants.traced);
    expect(spec.affinity).toEqual({ untraced_pinned: [1], traced_pinned: [1] });
  });

  it("untraced runs under the launcher, as every eval command does; traced wraps it in the harness's strace", () => {
    expect(spec.variants.untraced?.[0]).toBe(LAUNCHER_PATH);
    expect(spec.variants.untraced?.slice(-gcc.cmd.length)).toEqual([...gcc.cmd]);
    expect(spec.variants.traced?.slice(0, HARNESS_STRACE.length)).toEqual([...HARNESS_STRACE]);
    expect(spec.variants.traced).toContain(LAUNCHER_PATH);
    expect([spec.warmup, spec.reps]).toEqual([1, 4]);
  });
});
