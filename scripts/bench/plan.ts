/** How many rounds each part of the benchmark runs. Pure. */

export interface Rounds {
  warmup: number;
  reps: number;
}

export interface Plan {
  pinned: Rounds;
  unpinned: Rounds;
  roundTrip: Rounds;
  /** (d) eval's path: rounds of the four cells (traced or not, pinned or not) per workload. */
  evalPath: Rounds;
  /** (e) synthetic rollouts per (-n, pinning) configuration. */
  rollouts: number;
}

/** Unpinned traced runs can be the slow ones (classic ptrace saw find at ~100× bare), so they get fewer rounds. */
export function plan(reps: number, quick: boolean): Plan {
  if (quick) return { pinned: { warmup: 1, reps: 5 }, unpinned: { warmup: 0, reps: 3 }, roundTrip: { warmup: 1, reps: 5 }, evalPath: { warmup: 1, reps: 3 }, rollouts: 2 };
  return {
    pinned: { warmup: 2, reps },
    unpinned: { warmup: 1, reps: Math.min(reps, Math.max(5, Math.ceil(reps / 2))) },
    roundTrip: { warmup: 2, reps },
    // Eval's path pays a host round trip per command and the unpinned traced cells are slow: as the unpinned rounds.
    evalPath: { warmup: 1, reps: Math.min(reps, Math.max(5, Math.ceil(reps / 2))) },
    rollouts: 6,
  };
}

