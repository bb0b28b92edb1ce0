/**
 * The in-container stopwatch. A Docker exec round trip (~60 ms here) dwarfs a
 * 1 ms command, so each workload is timed inside the container: one exec runs
 * a small Python loop that posix_spawns every variant in turn (rotating the
 * order each round, so drift and cache warmth do not favour one variant) and
 * prints the durations as JSON. Spawn cost is the same for every variant and
 * so cancels out of the ratios. A variant may be pinned (`affinity`): the timer
 * sets its own CPU affinity just before spawning it, so the child — strace and
 * its tracee — inherits it, as from the session agent's sched_setaffinity
 * before exec in a rollout; and restores it after.
 */
import { z } from 'zod';
import { AuthbenchError, zodProblems } from '../../core/index.ts';

export const TIMER_SOURCE = String.raw`import json, os, sys, time
spec = json.loads(sys.argv[1])
os.chdir(spec["cwd"])
null = os.open("/dev/null", os.O_RDWR)
names = list(spec["variants"])
free = os.sched_getaffinity(0)
out = {n: [] for n in names}
for r in range(spec["warmup"] + spec["reps"]):
    k = r % len(names)
    for n in names[k:] + names[:k]:
        argv = spec["variants"][n]
        err = os.open(spec["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        pin = spec.get("affinity", {}).get(n)
        if pin is not None:
            os.sched_setaffinity(0, pin)
        t0 = time.perf_counter_ns()
        pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=[
            (os.POSIX_SPAWN_DUP2, null, 0), (os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, err, 2)])
        status = os.waitpid(pid, 0)[1]
        t1 = time.perf_counter_ns()
        if pin is not None:
            os.sched_setaffinity(0, free)
        os.close(err)
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            with open(spec["stderr"], errors="replace") as f:
                tail = f.read()[-2000:]
            print(json.dumps({"ok": False, "variant": n, "exit_code": code, "stderr": tail}))
            sys.exit(0)
        if r >= spec["warmup"]:
            out[n].append(t1 - t0)
print(json.dumps({"ok": True, "durations_ns": out}))
`;

export const TimerSpecSchema = z.object({
  cwd: z.string().describe('working directory of every run'),
  stderr: z.string().describe('file each run writes its stderr to (kept for the failure message)'),
  warmup: z.number().int().min(0).describe('rounds run first and discarded'),
  reps: z.number().int().min(1).describe('rounds recorded'),
  variants: z.record(z.string(), z.array(z.string()).min(1)).describe('variant name → argv'),
  affinity: z
    .record(z.string(), z.array(z.number().int().nonnegative()).min(1))
    .optional()
    .describe('variant name → the CPUs it is spawned on (absent: the timer\'s own affinity)'),
});
export type TimerSpec = z.infer<typeof TimerSpecSchema>;

export const TimerOutputSchema = z.discriminatedUnion('ok', [
  z.object({
    ok: z.literal(true),
    durations_ns: z.record(z.string(), z.array(z.number().nonnegative())).describe('variant → wall time of each recorded run, ns'),
  }),
  z.object({
    ok: z.literal(false),
    variant: z.string().describe('the variant whose run exited non-zero'),
    exit_code: z.number().int().describe('its exit code (negative: killed by that signal)'),
    stderr: z.string().describe('the tail of its stderr'),
  }),
]);
export type TimerOutput = z.infer<typeof TimerOutputSchema>;

/** argv of the timer run for a spec, given where TIMER_SOURCE was written. */
export function timerArgv(scriptPath: string, spec: TimerSpec): string[] {
  return ['python3', scriptPath, JSON.stringify(TimerSpecSchema.parse(spec))];
}

/** Durations in ms per variant; a failed run or unreadable output is a harness fault here (the workloads must succeed). */
export function parseTimerOutput(stdout: string, workload: string): Record<string, number[]> {
  const line = stdout.trim().split('\n').at(-1) ?? '';
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    throw new AuthbenchError('INTERNAL', `bench timer for ${workload} printed no JSON`, { details: [stdout.slice(-500)] });
  }
  const parsed = TimerOutputSchema.safeParse(json);
  if (!parsed.success) {
    throw new AuthbenchError('INTERNAL', `bench timer output for ${workload} is malformed`, {
      details: zodProblems(parsed.error, 'timer output').map((p) => `${p.field ?? '(root)'}: ${p.message}`),
    });
  }
  const out = parsed.data;
  if (!out.ok) {
    throw new AuthbenchError('INTERNAL', `${workload} (${out.variant}) exited ${out.exit_code} inside the bench container`, {
      details: out.stderr.trim().split('\n').slice(-8),
    });
  }
  return Object.fromEntries(Object.entries(out.durations_ns).map(([k, v]) => [k, v.map((ns) => ns / 1e6)]));
}
