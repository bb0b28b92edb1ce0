/**
 * A command kept in the background (RunOptions.keepBackground) reports in two parts: its result
 * when its main process ended, and what its processes did afterwards, returned by
 * stopBackground at the episode's end. Pure.
 */
import type { BackgroundResult, BackgroundStop, SandboxResult } from './session.ts';

/** The background part of `result`'s command in `stop`, if it was kept and reported. */
export function backgroundOf(result: SandboxResult, stop: BackgroundStop): BackgroundResult | undefined {
  const job = result.background?.job;
  return job === undefined ? undefined : stop.commands.find((c) => c.job === job);
}

/**
 * One command's result with its background part folded in, as if it had run to the stop in one
 * piece: events, denials and raw trace appended (they follow its own in time), trace accounts and
 * seccomp counts added. Its survivors stay what it left running.
 */
export function foldBackground(result: SandboxResult, stop: BackgroundStop): SandboxResult {
  const bg = backgroundOf(result, stop);
  if (bg === undefined) return result;
  const trace = result.trace;
  return {
    ...result,
    events: [...result.events, ...bg.events],
    denials: [...result.denials, ...bg.denials],
    ...(result.rawTrace === undefined ? {} : { rawTrace: result.rawTrace + (bg.rawTrace ?? '') }),
    ...(trace === undefined
      ? {}
      : { trace: { bytes: trace.bytes + bg.trace.bytes, truncated: trace.truncated || bg.trace.truncated, droppedEvents: trace.droppedEvents + bg.trace.droppedEvents } }),
    seccompDenials: (result.seccompDenials ?? 0) + bg.seccompDenials,
  };
}
