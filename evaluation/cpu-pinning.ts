/**
 * Pinned tracing in eval (`eval --cpu-pinning`): each concurrent rollout holds a slot, and every
 * command of the slot's rollout runs with strace and its tracee on the slot's one CPU (the
 * session's agent calls sched_setaffinity before exec, as gen-gold does with CPU 0). strace
 * --seccomp-bpf stops the tracee at each traced syscall and wakes the tracer: on one CPU that is a
 * context switch, across CPUs a cross-CPU wake-up and often a migration, which is what made
 * unpinned tracing up to twice as expensive (README, performance). Only the commands are
 * pinned, never the container: validators and the agent keep the task's CPU quota. Pure, but for
 * the slot pool's bookkeeping.
 */
import { z } from 'zod';

export const CpuPinningSchema = z
  .enum(['auto', 'off'])
  .describe('auto: each rollout slot pins its commands (tracer and tracee) to one CPU; off: the scheduler places them');
export type CpuPinning = z.infer<typeof CpuPinningSchema>;

/** Chosen by `make bench` (README, Performance): a pinned traced command was the cheaper in most interleaved runs, rollouts/min no worse. */
export const DEFAULT_CPU_PINNING: CpuPinning = 'auto';

/**
 * The CPU slot `slot` (0-based) pins to, over `cpus` CPUs numbered from 0: slot k → k mod cpus.
 * Fewer slots than CPUs: each slot has a CPU of its own. More: ⌈slots / cpus⌉ slots share a CPU,
 * round-robin, so no CPU carries two slots more than another. Pure.
 */
export function slotCpu(slot: number, cpus: number): number {
  if (!Number.isInteger(cpus) || cpus < 1) throw new RangeError(`slotCpu: cpus must be a positive integer, got ${cpus}`);
  if (!Number.isInteger(slot) || slot < 0) throw new RangeError(`slotCpu: slot must be a non-negative integer, got ${slot}`);
  return slot % cpus;
}

/** Every slot's CPU, for `slots` concurrent rollouts over `cpus` CPUs. Pure. */
export function slotCpus(slots: number, cpus: number): number[] {
  return Array.from({ length: slots }, (_, k) => slotCpu(k, cpus));
}

/**
 * The slots of a pool of `size` concurrent rollouts: a rollout takes the lowest free slot and
 * gives it back when done, so at any moment the running rollouts hold distinct slots (and so
 * spread over the CPUs as slotCpu says), whichever finished first.
 */
export class SlotPool {
  private readonly free: boolean[];

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`SlotPool: size must be a positive integer, got ${size}`);
    this.free = Array.from({ length: size }, () => true);
  }

  take(): number {
    const slot = this.free.indexOf(true);
    // The pool never runs more rollouts than it has slots; running out is a bug of the caller.
    if (slot < 0) throw new RangeError('SlotPool: no free slot');
    this.free[slot] = false;
    return slot;
  }

  release(slot: number): void {
    if (this.free[slot] !== false) throw new RangeError(`SlotPool: slot ${slot} is not taken`);
    this.free[slot] = true;
  }
}
