/**
 * The sandbox primitive: run one command inside a task container under a
 * policy, enforced by the kernel (ab-launch: Landlock + seccomp +
 * no_new_privs) and observed by strace. `authbench sandbox run`, gold
 * derivation and the execution agent all go through `SandboxSession.run`.
 *
 * Layering inside the container (argv, never a shell string):
 *   strace -f --seccomp-bpf … -o /proc/self/fd/3 -- ab-launch --channel 4 --rules-fd 5 -- <cmd…>
 * The session talks to a long-lived agent in the container (`ab-launch
 * --serve`: below the container's main process for a task container's first
 * session, attached before the container started, else one attached exec;
 * agent-client.ts) that spawns that argv and hands the wrappers
 * their descriptors: the trace pipe, the launcher's channel and the rules.
 * strace and the launcher come from the harness's read-only mount, strace
 * sits outside the sandbox (it traces; the launcher's seccomp filter forbids
 * ptrace only for the command), and events the launcher itself causes before
 * it execs the command are dropped, so the trace is the command's.
 *
 * What the session trusts, and why:
 * - Whether the launcher applied its rules (and which Landlock ABI) comes only
 *   from the channel, which the command never holds — never from its stderr
 *   or exit code, so a command printing a launcher-looking line is just a
 *   command.
 * - Every command runs inside a Landlock domain, enforced or not: unenforced
 *   commands run under the guard rules (GUARD_RULES), so no command can
 *   signal, ptrace or read the /proc of the agent, strace or pid 1.
 * - Grants come from the policy and the image, never from what commands did:
 *   the first listing of the container is the baseline (or, given as
 *   `imageBaseline`, the first listing of a fresh container of the same image
 *   and spec: the same tree), and only symlinks present in it may widen a
 *   grant (the compiler's `baseline`); later listings and trace patches say
 *   only what exists.
 * - A command that kills, stops or outlives the harness is reported, never
 *   absorbed: the agent dying or missing its deadline mid-command is
 *   SANDBOX_BROKEN; processes left after a traced command ended escaped the
 *   tracer and are reported as `escaped`.
 * - A command ends when its main process does, traced or not: processes it
 *   left running under the tracer (a daemon) are stopped then and reported as
 *   `survivors`, not waited for until the timeout — unless the command asked
 *   to keep them (`keepBackground`): they then run on, traced and in the same
 *   sandbox, as a background command until `stopBackground` (the episode's
 *   end), which returns their events since.
 * - `runShell` runs a call in the session's persistent shell (persistent-shell.ts): one bash,
 *   one launcher domain and one tracer for the episode; each call's result is a window onto it —
 *   what the domain did since the previous call ended — ended by a nonce line on a socket the
 *   command's programs never hold, not by anything in its output.
 */
import { AuthbenchError } from '../../core/index.ts';
import type { Container, ExecResult } from '../../docker/index.ts';
import { compilePolicy, type CompileResult, type PatternSet } from '../compile/index.ts';
import {
  AGENT_FDS,
  GUARD_RULES,
  HARNESS_STRACE,
  keeperArgv,
  LAUNCHER_PATH,
  launcherArgv,
  parseChannel,
  serializeRules,
  type AgentResponse,
  type LauncherReport,
  type LauncherRules,
} from '../launcher/index.ts';
import { parseSnapshot, type FsSnapshot } from '../paths/index.ts';
import { withEgressGrant, type EgressGrant, type Policy } from '../policy/index.ts';
import { seccompEvent, straceArgv, StraceParser, type TraceEvent } from '../trace/index.ts';
import { AgentClient } from './agent-client.ts';
import { HostTraceRouter, type HostTrace } from './host-trace.ts';
import { applyFileEvents } from './patch.ts';
import { frameShellCall, newShellNonce, persistentShellArgv } from './persistent-shell.ts';

/** The enforcement a command actually ran under; recorded in every result. */
export interface Enforcement {
  /** `none`: no policy enforced (defense none, gold derivation's oracle run); the harness guard still applied. */
  level: 'full' | 'partial' | 'none';
  landlockAbi: number;
  seccomp: boolean;
  bestEffort: boolean;
}

export type PolicyMode = { kind: 'enforce'; policy: Policy; implicit: PatternSet } | { kind: 'unenforced' };

export interface RunOptions {
  cmd: readonly string[];
  mode: PolicyMode;
  /** Trace with strace (default true). */
  trace?: boolean;
  /** Also return the raw strace text (for storing the oracle's trace). */
  keepRawTrace?: boolean;
  workdir?: string;
  env?: Readonly<Record<string, string>>;
  stdin?: string;
  timeoutMs?: number;
  outputCapBytes?: number;
  /** Trace bytes kept for this command; beyond them the trace is cut (default: the session's). */
  traceCapBytes?: number;
  /** Trace events kept for this command; beyond them the rest is dropped and the result says so (default: the session's). */
  traceCapEvents?: number;
  /**
   * Traced: processes still running when the main process ends (a service it started) keep
   * running — traced, in the command's sandbox — as a background command until stopBackground,
   * instead of being stopped (the agent keeps a few at once; beyond them they are stopped).
   */
  keepBackground?: boolean;
}

/** How much of a command's trace was kept. */
export interface TraceAccount {
  /** Bytes strace wrote. */
  bytes: number;
  /** The trace outgrew the byte cap and was cut: events after the cut are missing. */
  truncated: boolean;
  /** Events dropped beyond the event cap (0: none). */
  droppedEvents: number;
}

export interface SandboxResult {
  exec: ExecResult;
  /** The command's own events (launcher setup removed), seccomp denials merged in; empty when untraced. */
  events: TraceEvent[];
  /** Events the kernel refused: Landlock (EACCES/EPERM in the trace) and seccomp (recorded by the agent). */
  denials: TraceEvent[];
  enforcement: Enforcement;
  /** Present when enforcing: the rules sent to the kernel and where they grant more than the policy. */
  compiled?: CompileResult;
  /** Set when the launcher itself failed (fail-closed): the command never ran. From the channel only. */
  launcherError?: string;
  /** The launcher's report, from the channel (what it applied, rules it skipped). */
  launcherReport?: LauncherReport;
  /** The strace output as written, when asked for with keepRawTrace. */
  rawTrace?: string;
  /** Bytes the command wrote in total, including what the output cap dropped. */
  outputBytes?: { stdout: number; stderr: number };
  /** The kept output as bytes (exec holds it decoded, lossy when not UTF-8); absent when the command never ran. */
  rawOutput?: { stdout: Buffer; stderr: Buffer };
  /** When traced: how much of the trace was kept. */
  trace?: TraceAccount;
  /** Seccomp denials in all (events keep the first few thousand); absent from fakes. */
  seccompDenials?: number;
  /**
   * Processes still alive after the command's main process ended, killed by the agent. After a
   * traced command they escaped the tracer (`escaped`: evidence of tampering); after an untraced
   * one they were only left in the background.
   */
  leftover?: { count: number; escaped: boolean; info: string };
  /**
   * Traced commands: processes the tracer still followed when the main process ended (a service
   * it started, a background job), stopped then so that the command ends; `info` is `pid comm`
   * per line, the first few. Not tampering: they ran traced until they were stopped.
   */
  survivors?: { count: number; info: string };
  /** The command could not be started in its working directory (an earlier command removed it): it never ran. */
  spawnError?: string;
  /** The tracer (or, untraced, the launcher): a harness process while the command ran. */
  mainPid?: number;
  /** The survivors were kept running (keepBackground) as this background command; stopBackground returns the rest. */
  background?: { job: number };
  /**
   * The host cut the command (`cut()`, the storage guard): its processes were stopped as on a
   * timeout (`exec.timedOut`), the tracer last, so its events up to the cut are in the trace.
   */
  cut?: true;
}

export interface ShellCallOptions {
  command: string;
  /** The shell's policy: a call under another one ends the shell and starts a new one (recorded). */
  mode: PolicyMode;
  /** Where a new shell starts (default the session's workdir); later calls are where the shell is. */
  workdir?: string;
  env?: Readonly<Record<string, string>>;
  timeoutMs?: number;
  outputCapBytes?: number;
  traceCapBytes?: number;
  traceCapEvents?: number;
}

/** What happened to the persistent shell in one call. */
export interface ShellCallRecord {
  /** This call started a shell. */
  started: boolean;
  /** Why the previous shell is gone, when this call started a new one after it. */
  restarted?: string;
  /** The shell ended with this call (exit, exec, a kill, a timeout it did not survive), and why. */
  ended?: string;
  /** Lines on the delimiter socket without this call's nonce (forgery attempts, ignored). */
  forgedDelimiters: number;
  /** The shell's background command, while it lives (its tail comes back from stopBackground). */
  job?: number;
}

export type ShellCallResult = SandboxResult & { shell: ShellCallRecord };

/** The live shell, as the host follows it: one trace parse for its whole life. */
interface ShellState {
  /** The policy mode it was started under, and the rules that compiled to. */
  policyKey: string;
  rules: string;
  /** strace's parse of the shell's trace; absent under a host trace (the router follows the shell's tree as its job). */
  parser?: StraceParser;
  enforcement: Enforcement;
  report?: LauncherReport;
  compiled?: CompileResult;
  job: number;
  eventCap: number;
  eventsSoFar: number;
}

/** What a background command did after its command's result, until it was stopped. */
export interface BackgroundResult {
  job: number;
  /** The events that followed the command's own (seccomp denials merged in). */
  events: TraceEvent[];
  denials: TraceEvent[];
  trace: TraceAccount;
  seccompDenials: number;
  /** Processes still running at the stop, killed then; `pid comm` per line, the first few. */
  stopped: { count: number; info: string };
  /** The strace output that followed the command's own, when the command asked for keepRawTrace. */
  rawTrace?: string;
}

export interface BackgroundStop {
  commands: BackgroundResult[];
  /** Processes no tracer followed, killed at the stop: evidence of tampering. */
  leftover: { count: number; info: string };
}

/** The parse of a background command's trace, carried on where its command's result left it. */
interface BackgroundState {
  /** strace's parse; absent when the host traces (its events come from the router). */
  parser?: StraceParser;
  keepRawTrace: boolean;
  eventCap: number;
  eventsSoFar: number;
}

export interface SessionOptions {
  /** Continue when Landlock/seccomp cannot be fully applied (never the default). */
  bestEffort?: boolean;
  /** Pin strace's tracee to one CPU (cheap --seccomp-bpf tracing). */
  pinCpu?: number;
  /** Default trace cap per command, bytes (default 32 MiB). */
  traceCapBytes?: number;
  /** Default trace cap per command, events (default 150,000). */
  traceCapEvents?: number;
  /**
   * Paths no policy entry may grant (default the compiler's RESERVED_PATHS: the harness, the
   * tests, the verifier's logs, the solution). Gold derivation replays the reference solution
   * and passes the list without `/solution`.
   */
  reserved?: readonly string[];
  /**
   * The environment's egress proxy: an enforced policy naming a host it serves gets its port
   * before compiling (withEgressGrant; taskenv/egress.ts).
   */
  egress?: EgressGrant;
  /**
   * The listing of this container's image, as a fresh container of the same spec showed it before
   * anything ran in it or was written to it (taskenv's per-image cache): the baseline and the first
   * snapshot, instead of listing this container. The caller vouches that nothing changed this
   * container since it started; a listing of any container something ran in must never be given.
   */
  imageBaseline?: FsSnapshot;
  /**
   * Trace with eBPF from the host instead of strace in the container (`eval --tracer ebpf`): this
   * container's share of the hub (sandbox/ebpf/hub.ts), opened before the first command. Each
   * traced command then runs under a keeper (`ab-launch --keep`) in strace's place, and its events
   * are its process tree's in the container's trace (host-trace.ts). The persistent shell runs
   * under a keeper too, its tree followed as a background job's; each call takes its window.
   */
  hostTrace?: HostTrace;
  /**
   * RLIMIT_FSIZE in bytes (ab-launch --fsize-max) for every command the session runs for the
   * agent — run, background commands, the persistent shell — and all they start: no file they
   * write grows past it. Not for runHarness (the harness's own steps, e.g. validators).
   */
  fileSizeMax?: number;
}

/**
 * What the host keeps of one command's trace. Beyond either cap the trace is cut, never the
 * command (enforcement does not depend on the trace; only measurement does, and the cut is
 * recorded): host memory stays bounded (about 1.4 KB per kept event in the CLI, measured)
 * whatever a command floods. The episode has its own budget (agent/loop.ts).
 */
export const TRACE_CAPS = {
  bytes: 32 * 1024 * 1024,
  events: 150_000,
} as const;

/** How long past a command's own timeout the host waits for the agent's answer before calling it broken. */
export const AGENT_DEADLINE_MARGIN_MS = 30_000;
/** A command without a timeout still gets a host deadline. */
const NO_TIMEOUT_DEADLINE_MS = 6 * 60 * 60 * 1000;
const LISTING_DEADLINE_MS = 120_000;
/** The stop request: the agent's own grace periods are a few seconds; a wider margin for a loaded host. */
const STOP_DEADLINE_MS = 60_000;
/** The cut's exec: `--cut-serve` itself waits 20 s for the agent's acknowledgement. */
const CUT_TIMEOUT_MS = 30_000;
const SNAPSHOT_ROOTS = ['/', '/dev'];
/** No command reaches a process outside its own launch: not the agent, the tracer, pid 1 or an earlier command's. */
const HARNESS_SCOPE: LauncherRules['scope'] = ['signal', 'abstract-unix'];

/** File events that change the tree's shape and so invalidate the snapshot. */
const STRUCTURAL_OPS = new Set(['create', 'unlink', 'rename', 'mkdir', 'rmdir', 'link', 'symlink']);

/** Where the strace output goes: the pipe the agent gives the command at AGENT_FDS.trace. */
const TRACE_OUTPUT = `/proc/self/fd/${AGENT_FDS.trace}`;
/** A keeper writes two short lines on the trace pipe (ab-keep.c): room for them, not for a trace. */
const KEEPER_TRACE_CAP_BYTES = 4096;

export class SandboxSession {
  readonly container: Container;
  readonly workdir: string;
  readonly options: SessionOptions;
  private abi: number | undefined;
  private baseline: FsSnapshot | undefined;
  /** The last compile and what it was of (compile). */
  private lastCompile: { snapshot: FsSnapshot; policy: Policy; implicit: PatternSet; result: CompileResult } | undefined;
  private snapshot: FsSnapshot | undefined;
  private agent: Promise<AgentClient> | undefined;
  private readonly background = new Map<number, BackgroundState>();
  private shell: ShellState | undefined;
  /** Why the last shell ended, told on the call that starts the next one. */
  private shellEnded: string | undefined;
  /** With a host trace: which of the container's events are which command's. */
  private readonly router = new HostTraceRouter(LAUNCHER_PATH);

  constructor(container: Container, workdir: string, options: SessionOptions = {}) {
    this.container = container;
    this.workdir = workdir;
    this.options = options;
    // The same tree a first listing of this container would give (imageBaseline's contract), without listing it.
    this.baseline = options.imageBaseline;
    this.snapshot = options.imageBaseline;
  }

  /** Landlock ABI of the kernel, probed once through the launcher itself (under the guard rules). */
  async landlockAbi(): Promise<number> {
    if (this.abi !== undefined) return this.abi;
    const response = await this.send({ argv: launcherArgv({ rulesFd: AGENT_FDS.rules, channelFd: AGENT_FDS.channel, bestEffort: true, cmd: ['true'] }), workdir: '/', rules: serializeRules(GUARD_RULES), trace: false, timeoutMs: 30_000 });
    const verdict = parseChannel(response.channelMessages);
    if (verdict.report === undefined) {
      throw new AuthbenchError('SANDBOX_UNAVAILABLE', `the launcher sent no report${verdict.failure === undefined ? '' : `: ${verdict.failure.message}`}`, {
        hint: `is the harness (${LAUNCHER_PATH}) mounted in the container?`,
      });
    }
    this.abi = verdict.report.landlock_abi;
    return this.abi;
  }

  /** Start the in-container agent now rather than on the first request (a failure to start shows here). */
  async start(): Promise<void> {
    await this.client();
  }

  /** Processes the command must not touch: the agent, pid 1 and the container's idle process. */
  async harnessPids(): Promise<readonly number[]> {
    return (await this.client()).harnessPids;
  }

  /** The container's filesystem as the compiler needs it; refreshed when commands changed its shape. */
  async fsSnapshot(): Promise<FsSnapshot> {
    if (this.snapshot !== undefined) return this.snapshot;
    const listing = await (await this.client()).list(SNAPSHOT_ROOTS, LISTING_DEADLINE_MS);
    this.snapshot = parseSnapshot(listing.toString('utf8'), SNAPSHOT_ROOTS);
    // The first listing, before any command ran, is what the image holds: the only place grants may come from.
    this.baseline ??= this.snapshot;
    return this.snapshot;
  }

  /** The first listing of the container (the image as built), once taken. */
  async baselineSnapshot(): Promise<FsSnapshot> {
    await this.fsSnapshot();
    if (this.baseline === undefined) throw new AuthbenchError('INTERNAL', 'sandbox session: no baseline after listing');
    return this.baseline;
  }

  invalidateSnapshot(): void {
    this.snapshot = undefined;
  }

  /**
   * After a command: patch the snapshot from its trace (what it created,
   * removed, renamed) instead of listing the container again. An untraced
   * command, a truncated trace, or a tree-changing call whose outcome strace
   * could not see forces a fresh listing before the next compile.
   */
  private updateSnapshot(traced: boolean, complete: boolean, events: readonly TraceEvent[]): void {
    if (this.snapshot === undefined) return;
    const unknownOutcome = events.some((e) => e.kind === 'file' && e.result === null && STRUCTURAL_OPS.has(e.op));
    if (!traced || !complete || unknownOutcome) this.invalidateSnapshot();
    else this.snapshot = applyFileEvents(this.snapshot, events);
  }

  /**
   * Compile a policy against the current filesystem (what `run` would enforce). Every enforced
   * command is scoped (signals, abstract sockets): that is what keeps it away from the agent,
   * the tracer and pid 1, so the launcher refuses to run without it (Landlock ABI >= 6).
   */
  async compile(policy: Policy, implicit: PatternSet): Promise<CompileResult> {
    const snapshot = await this.fsSnapshot();
    // A command that changed nothing leaves the very same snapshot (applyFileEvents), and the
    // compile is pure in it, the policy and what is fixed per session: the result stands.
    const last = this.lastCompile;
    if (last !== undefined && last.snapshot === snapshot && last.policy === policy && last.implicit === implicit) return last.result;
    const result = await this.compileAgainst(policy, implicit, snapshot);
    this.lastCompile = { snapshot, policy, implicit, result };
    return result;
  }

  private async compileAgainst(policy: Policy, implicit: PatternSet, snapshot: FsSnapshot): Promise<CompileResult> {
    const compiled = compilePolicy(this.options.egress === undefined ? policy : withEgressGrant(policy, this.options.egress), snapshot, {
      implicit,
      abi: await this.landlockAbi(),
      baseline: await this.baselineSnapshot(),
      ...(this.options.reserved === undefined ? {} : { reserved: this.options.reserved }),
    });
    return { ...compiled, rules: { ...compiled.rules, scope: HARNESS_SCOPE } };
  }

  async run(options: RunOptions): Promise<SandboxResult> {
    const trace = options.trace ?? true;
    // Background commands change the tree after their command's trace ended: the patched snapshot is stale.
    if (this.background.size > 0) this.invalidateSnapshot();
    const workdir = options.workdir ?? this.workdir;
    const compiled = options.mode.kind === 'enforce' ? await this.compile(options.mode.policy, options.mode.implicit) : undefined;
    const rules = serializeRules(compiled?.rules ?? GUARD_RULES);
    const launched = launcherArgv({ ...this.launcherLimits(), rulesFd: AGENT_FDS.rules, channelFd: AGENT_FDS.channel, bestEffort: this.options.bestEffort === true, cmd: options.cmd });
    const host = trace ? this.options.hostTrace : undefined;
    // The container is traced while a command or a kept service of the agent runs in it, not between.
    await host?.resume();
    const argv = !trace ? launched : host !== undefined ? keeperArgv(launched) : straceArgv({ outputPath: TRACE_OUTPUT, strace: HARNESS_STRACE, cmd: launched });
    const response = await this.send({
      argv,
      workdir,
      rules,
      trace,
      ...(host === undefined ? {} : { hostTraced: true }),
      ...(options.env === undefined ? {} : { env: options.env }),
      ...(options.stdin === undefined ? {} : { stdin: options.stdin }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.outputCapBytes === undefined ? {} : { outputCapBytes: options.outputCapBytes }),
      traceCapBytes: host !== undefined ? KEEPER_TRACE_CAP_BYTES : (options.traceCapBytes ?? this.options.traceCapBytes ?? TRACE_CAPS.bytes),
      keepBackground: trace && options.keepBackground === true,
    });
    const exec = execResultOf(response);
    const verdict = parseChannel(response.channelMessages);
    const abi = verdict.report?.landlock_abi ?? (await this.landlockAbi());

    let enforcement: Enforcement = { level: 'none', landlockAbi: abi, seccomp: false, bestEffort: this.options.bestEffort === true };
    if (verdict.report !== undefined) {
      enforcement = {
        // Unenforced commands run under the guard only: no policy, so no enforcement level to claim.
        level: options.mode.kind === 'enforce' ? verdict.report.enforcement : 'none',
        landlockAbi: verdict.report.landlock_abi,
        seccomp: verdict.report.seccomp,
        bestEffort: this.options.bestEffort === true,
      };
    }
    let launcherError: string | undefined;
    let spawnError: string | undefined;
    if (response.spawnError !== undefined) {
      // The agent could not start the wrappers at all. A missing working directory is the command's
      // world (an earlier command removed it), reported as the command failing; anything else is ours.
      if (!response.spawnError.startsWith('chdir ')) {
        throw new AuthbenchError('SANDBOX_UNAVAILABLE', `the sandbox agent could not start the command: ${response.spawnError}`);
      }
      spawnError = `cannot enter the working directory ${workdir}: ${response.spawnError.slice('chdir '.length)}`;
    } else if (verdict.failure !== undefined) {
      launcherError = `ab-launch: ${verdict.failure.message}`;
    } else if (verdict.report === undefined) {
      launcherError = `the launcher never reported (${describeOutcome(exec)}); the command did not run under it`;
    }

    let events: TraceEvent[] = [];
    let rawTrace: string | undefined;
    let account: TraceAccount | undefined;
    if (host !== undefined) {
      // Everything the container did up to now is in the take: the command's tree, and its background jobs' events.
      // When nothing of the agent's runs on after it (its leftovers were stopped), the take pauses
      // the trace too: the validators and the agent's listings go untraced.
      const idle = response.backgroundJob === undefined && this.background.size === 0 && this.shell === undefined;
      const taken = await host.take({ pause: idle });
      if (response.mainPid !== undefined && spawnError === undefined) this.router.begin(response.mainPid);
      this.router.route(taken.events);
      const own = this.router.end(response.backgroundJob);
      const denied = response.denials.map((d) => seccompEvent(d));
      const all = denied.length === 0 ? own : mergeByTime(own, denied);
      const cap = options.traceCapEvents ?? this.options.traceCapEvents ?? TRACE_CAPS.events;
      events = all.length > cap ? all.slice(0, cap) : all;
      // What the kernel could not hand over (its buffer full) makes the trace as incomplete as a cut one.
      account = { bytes: taken.bytes, truncated: taken.lost > 0, droppedEvents: all.length - events.length };
      if (response.backgroundJob !== undefined) {
        this.background.set(response.backgroundJob, { keepRawTrace: false, eventCap: cap, eventsSoFar: events.length });
      }
    } else if (trace && spawnError === undefined) {
      const raw = response.trace;
      if (raw === undefined) throw new AuthbenchError('TRACE_UNREADABLE', 'the sandbox agent returned no trace for a traced command');
      const text = raw.kept.toString('utf8');
      if (options.keepRawTrace === true) rawTrace = text;
      // A background command's trace goes on: calls still in flight complete in its later events.
      const parser = new StraceParser({ cwd: workdir });
      const parsed = dropLauncherSetup([...parser.push(text), ...(response.backgroundJob === undefined ? parser.end() : [])]);
      const denied = response.denials.map((d) => seccompEvent(d));
      const all = denied.length === 0 ? parsed : mergeByTime(parsed, denied);
      const cap = options.traceCapEvents ?? this.options.traceCapEvents ?? TRACE_CAPS.events;
      events = all.length > cap ? all.slice(0, cap) : all;
      account = { bytes: raw.bytes, truncated: raw.bytes > raw.kept.length, droppedEvents: all.length - events.length };
      if (response.backgroundJob !== undefined) {
        this.background.set(response.backgroundJob, { parser, keepRawTrace: options.keepRawTrace === true, eventCap: cap, eventsSoFar: events.length });
      }
    }
    const complete = account !== undefined && !account.truncated && account.droppedEvents === 0;
    this.updateSnapshot(trace, complete, events);
    const denials = events.filter((e) => e.kind !== 'unparsed' && e.denied === true);
    return {
      exec: spawnError === undefined ? exec : { ...exec, exitCode: 126, stderr: `${spawnError}\n` },
      events,
      denials,
      enforcement,
      seccompDenials: response.denialsTotal,
      leftover: { count: response.leftover, escaped: trace && response.leftover > 0, info: response.leftoverInfo },
      survivors: { count: response.survivors, info: response.survivorInfo },
      outputBytes: { stdout: response.stdoutBytes, stderr: response.stderrBytes },
      ...(spawnError === undefined ? { rawOutput: { stdout: response.stdout, stderr: response.stderr } } : {}),
      ...(compiled === undefined ? {} : { compiled }),
      ...(launcherError === undefined ? {} : { launcherError }),
      ...(verdict.report === undefined ? {} : { launcherReport: verdict.report }),
      ...(rawTrace === undefined ? {} : { rawTrace }),
      ...(account === undefined ? {} : { trace: account }),
      ...(spawnError === undefined ? {} : { spawnError }),
      ...(response.mainPid === undefined ? {} : { mainPid: response.mainPid }),
      ...(response.backgroundJob === undefined ? {} : { background: { job: response.backgroundJob } }),
      ...(response.cut === true ? { cut: true as const } : {}),
    };
  }

  /** The launcher's limits for a command of the agent's (not the harness's own, not the ABI probe). */
  private launcherLimits(): { fileSizeMax?: number } {
    return this.options.fileSizeMax === undefined ? {} : { fileSizeMax: this.options.fileSizeMax };
  }

  /**
   * The host's storage guard: stop everything of the agent's now — a running command as on its
   * timeout (its result then says `cut`), and the processes of the background commands and of the
   * persistent shell (stopBackground still answers for them; the shell's next call starts a new
   * one) — by a signal from this host when it can (a local engine, as root: Container.signalFromHost),
   * else through `ab-launch --cut-serve`, a Docker exec as root outside the sandbox. Meant to be
   * called while run() is in flight. With nothing running it is a no-op; later commands run
   * normally. Resolves true once sent from the host or acknowledged by the agent, false when the
   * session has no started agent or it has ended (never throws for that).
   */
  async cut(): Promise<boolean> {
    const started = this.agent;
    if (started === undefined) return false;
    const client = await started.catch(() => undefined);
    if (client?.alive !== true) return false;
    // From this host when it can: no exec's latency (the container writes on meanwhile), and nothing
    // to start in a container whose pids limit the agent spent. The agent takes a sender outside its
    // namespace (si_pid 0) as the host's; it acknowledges only an exec'd sender, so this returns once sent.
    if ((await this.container.signalFromHost?.(client.pid, 'SIGUSR1').catch(() => false)) === true) return true;
    try {
      const r = await this.container.exec({ cmd: [LAUNCHER_PATH, '--cut-serve', String(client.pid)], user: '0:0', workdir: '/', timeoutMs: CUT_TIMEOUT_MS, outputCapBytes: 4096 });
      return r.exitCode === 0;
    } catch (e) {
      // The container (and so the agent) is gone, or Docker could not run the exec: nothing was cut.
      if (e instanceof AuthbenchError) return false;
      throw e;
    }
  }

  /**
   * One call in the persistent shell (started on the first call, and again after one ended).
   * Always traced. The call's events are the shell domain's since the previous call ended; a
   * shell that ended between calls, or that the new policy replaces, adds its tail to them.
   */
  async runShell(options: ShellCallOptions): Promise<ShellCallResult> {
    const host = this.options.hostTrace;
    const workdir = options.workdir ?? this.workdir;
    // The shell's domain is compiled once, when it starts (as a long-running command's is): only a
    // different policy replaces it, not a filesystem that changed under the same one.
    const policyKey = JSON.stringify(options.mode);
    const same = this.shell !== undefined && this.shell.policyKey === policyKey;
    const mode = options.mode;
    const fresh = async (): Promise<CompileResult | undefined> => (mode.kind === 'enforce' ? await this.compile(mode.policy, mode.implicit) : undefined);
    let compiled = same ? undefined : await fresh();
    let rules = same && this.shell !== undefined ? this.shell.rules : serializeRules(compiled?.rules ?? GUARD_RULES);
    const eventCap = options.traceCapEvents ?? this.options.traceCapEvents ?? TRACE_CAPS.events;
    const tail: { events: TraceEvent[]; bytes: number; truncated: boolean; denials: number } = { events: [], bytes: 0, truncated: false, denials: 0 };
    const launched = launcherArgv({ ...this.launcherLimits(), rulesFd: AGENT_FDS.rules, channelFd: AGENT_FDS.channel, bestEffort: this.options.bestEffort === true, cmd: persistentShellArgv() });
    // Under a host trace the shell's keeper holds it (and the container is traced while it lives).
    const argv = host !== undefined ? keeperArgv(launched) : straceArgv({ outputPath: TRACE_OUTPUT, strace: HARNESS_STRACE, cmd: launched });
    await host?.resume();
    const send = (nonce: string, reset: boolean): Promise<AgentResponse> =>
      this.send({
        argv,
        workdir,
        rules,
        trace: true,
        stdin: reset ? '' : frameShellCall(nonce, options.command).toString('utf8'),
        ...(options.env === undefined ? {} : { env: options.env }),
        ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
        ...(options.outputCapBytes === undefined ? {} : { outputCapBytes: options.outputCapBytes }),
        traceCapBytes: host !== undefined ? KEEPER_TRACE_CAP_BYTES : (options.traceCapBytes ?? this.options.traceCapBytes ?? TRACE_CAPS.bytes),
        ...(host === undefined ? {} : { hostTraced: true }),
        shell: { nonce, ...(reset ? { reset: true } : {}) },
      });
    /** A host trace: everything the container did up to this answer, routed (the shell's tree is its job's). */
    const hostTake = async (begin?: number): Promise<{ bytes: number; lost: number }> => {
      if (host === undefined) return { bytes: 0, lost: 0 };
      const taken = await host.take();
      if (begin !== undefined) this.router.begin(begin);
      this.router.route(taken.events);
      return { bytes: taken.bytes, lost: taken.lost };
    };
    // The tail of a shell that ends before this call runs: its events open this call's window.
    const takeTail = async (response: AgentResponse, state: ShellState | undefined): Promise<void> => {
      const raw = response.trace;
      if (state !== undefined && (host !== undefined || raw !== undefined)) {
        let parsed: TraceEvent[];
        if (state.parser === undefined || raw === undefined) {
          const taken = await hostTake();
          parsed = this.router.stopJob(state.job);
          tail.bytes += taken.bytes;
          tail.truncated ||= taken.lost > 0;
        } else {
          parsed = [...state.parser.push(raw.kept.toString('utf8')), ...state.parser.end()];
          tail.bytes += raw.bytes;
          tail.truncated ||= raw.bytes > raw.kept.length;
        }
        const denied = response.denials.map((d) => seccompEvent(d));
        tail.events.push(...(denied.length === 0 ? parsed : mergeByTime(parsed, denied)));
        tail.denials += response.denialsTotal;
      }
      this.shell = undefined;
    };
    if (this.shell !== undefined && !same) {
      const state = this.shell;
      await takeTail(await send(newShellNonce(), true), state);
      this.shellEnded = 'the policy changed: a new shell runs under it';
    }
    let response = await send(newShellNonce(), false);
    if (response.shell?.notRun === true) {
      // The shell ended between calls (a job it left killed it): its tail, then the call in a new one.
      await takeTail(response, this.shell);
      this.shellEnded = response.shell.ended ?? 'the shell ended between calls';
      // A new shell: compiled against the filesystem as it is now.
      compiled = await fresh();
      rules = serializeRules(compiled?.rules ?? GUARD_RULES);
      response = await send(newShellNonce(), false);
    }
    const report = response.shell;
    if (report === undefined || report.notRun) throw new AuthbenchError('SANDBOX_UNAVAILABLE', 'the sandbox agent did not run the call in a persistent shell');
    const restarted = report.started ? this.shellEnded : undefined;
    if (report.started) this.shellEnded = undefined;

    const exec = execResultOf(response);
    let spawnError: string | undefined;
    if (response.spawnError !== undefined) {
      if (!response.spawnError.startsWith('chdir ')) {
        throw new AuthbenchError('SANDBOX_UNAVAILABLE', `the sandbox agent could not start the shell: ${response.spawnError}`);
      }
      spawnError = `cannot enter the working directory ${workdir}: ${response.spawnError.slice('chdir '.length)}`;
    }
    let state = this.shell;
    let launcherError: string | undefined;
    if (report.started && spawnError === undefined) {
      const verdict = parseChannel(response.channelMessages);
      const abi = verdict.report?.landlock_abi ?? (await this.landlockAbi());
      const enforcement: Enforcement =
        verdict.report === undefined
          ? { level: 'none', landlockAbi: abi, seccomp: false, bestEffort: this.options.bestEffort === true }
          : {
              level: options.mode.kind === 'enforce' ? verdict.report.enforcement : 'none',
              landlockAbi: verdict.report.landlock_abi,
              seccomp: verdict.report.seccomp,
              bestEffort: this.options.bestEffort === true,
            };
      if (verdict.failure !== undefined) launcherError = `ab-launch: ${verdict.failure.message}`;
      else if (verdict.report === undefined) launcherError = `the launcher never reported (${describeOutcome(exec)}); the shell did not run under it`;
      state = {
        policyKey,
        rules,
        ...(host === undefined ? { parser: new StraceParser({ cwd: workdir }) } : {}),
        enforcement,
        ...(verdict.report === undefined ? {} : { report: verdict.report }),
        ...(compiled === undefined ? {} : { compiled }),
        job: response.backgroundJob ?? 0,
        eventCap,
        eventsSoFar: 0,
      };
    }
    const enforcement = state?.enforcement ?? { level: 'none' as const, landlockAbi: await this.landlockAbi(), seccomp: false, bestEffort: this.options.bestEffort === true };

    let events: TraceEvent[] = [...tail.events];
    let account: TraceAccount | undefined;
    if (host !== undefined) {
      // This call's window: what the shell's tree did since the previous call (or, started now,
      // its tree from the launcher the keeper ran, setup left out), as strace's window holds.
      const startedNow = report.started && spawnError === undefined && response.mainPid !== undefined;
      const taken = await hostTake(startedNow ? response.mainPid : undefined);
      const keptAs = report.ended === undefined ? response.backgroundJob : undefined;
      const own = startedNow ? this.router.end(keptAs) : state === undefined ? [] : report.ended === undefined ? this.router.drainJob(state.job) : this.router.stopJob(state.job);
      const denied = response.denials.map((d) => seccompEvent(d));
      const all = [...tail.events, ...(denied.length === 0 ? own : mergeByTime(own, denied))];
      events = all.length > eventCap ? all.slice(0, eventCap) : all;
      if (state !== undefined) state.eventsSoFar += events.length;
      account = { bytes: taken.bytes + tail.bytes, truncated: tail.truncated || taken.lost > 0, droppedEvents: all.length - events.length };
    } else if (state !== undefined && response.trace !== undefined && state.parser !== undefined) {
      const raw = response.trace;
      const ended = report.ended !== undefined;
      const parsed = [...state.parser.push(raw.kept.toString('utf8')), ...(ended ? state.parser.end() : [])];
      const own = report.started ? dropLauncherSetup(parsed) : parsed;
      const denied = response.denials.map((d) => seccompEvent(d));
      const all = [...tail.events, ...(denied.length === 0 ? own : mergeByTime(own, denied))];
      events = all.length > eventCap ? all.slice(0, eventCap) : all;
      state.eventsSoFar += events.length;
      account = { bytes: raw.bytes + tail.bytes, truncated: tail.truncated || raw.bytes > raw.kept.length, droppedEvents: all.length - events.length };
    }
    this.shell = report.ended === undefined && state !== undefined && response.backgroundJob !== undefined ? { ...state, job: response.backgroundJob } : undefined;
    if (report.ended !== undefined) this.shellEnded = report.ended;
    // Nothing of the agent's runs on (the shell ended, no service kept): untraced until the next command.
    if (host !== undefined && this.shell === undefined && this.background.size === 0) await host.pause();
    const complete = account !== undefined && !account.truncated && account.droppedEvents === 0;
    this.updateSnapshot(true, complete, events);
    const denials = events.filter((e) => e.kind !== 'unparsed' && e.denied === true);
    const compiledNow = state?.compiled;
    return {
      exec: spawnError === undefined ? exec : { ...exec, exitCode: 126, stderr: `${spawnError}\n` },
      events,
      denials,
      enforcement,
      seccompDenials: response.denialsTotal + tail.denials,
      leftover: { count: response.leftover, escaped: response.leftover > 0, info: response.leftoverInfo },
      survivors: { count: response.survivors, info: response.survivorInfo },
      outputBytes: { stdout: response.stdoutBytes, stderr: response.stderrBytes },
      ...(spawnError === undefined ? { rawOutput: { stdout: response.stdout, stderr: response.stderr } } : {}),
      ...(compiledNow === undefined ? {} : { compiled: compiledNow }),
      ...(launcherError === undefined ? {} : { launcherError }),
      ...(state?.report === undefined ? {} : { launcherReport: state.report }),
      ...(account === undefined ? {} : { trace: account }),
      ...(spawnError === undefined ? {} : { spawnError }),
      ...(response.mainPid === undefined ? {} : { mainPid: response.mainPid }),
      shell: {
        started: report.started,
        forgedDelimiters: report.forged,
        ...(restarted === undefined ? {} : { restarted }),
        ...(report.ended === undefined ? {} : { ended: report.ended }),
        ...(this.shell === undefined ? {} : { job: this.shell.job }),
      },
      ...(response.cut === true ? { cut: true as const } : {}),
    };
  }

  /** Nothing of the agent's runs on in the session (no background command, no persistent shell): runHarness may be used. */
  get canRunHarness(): boolean {
    return this.background.size === 0 && this.shell === undefined;
  }

  /** Background commands still running (kept by keepBackground, not yet stopped). */
  get backgroundCount(): number {
    return this.background.size;
  }

  /**
   * The episode's end: stop every background command and return what each did since its
   * command's result (its events, capped with the command's event cap). A no-op without any.
   */
  async stopBackground(): Promise<BackgroundStop> {
    if (this.background.size === 0 && this.shell === undefined) return { commands: [], leftover: { count: 0, info: '' } };
    const states = new Map(this.background);
    // The persistent shell is a background command too: what it did since its last call comes back here.
    if (this.shell !== undefined) {
      const { parser, job, eventCap, eventsSoFar } = this.shell;
      states.set(job, { ...(parser === undefined ? {} : { parser }), keepRawTrace: false, eventCap, eventsSoFar });
    }
    this.shell = undefined;
    this.shellEnded = undefined;
    this.background.clear();
    this.invalidateSnapshot();
    const report = await (await this.client()).stopBackground(STOP_DEADLINE_MS);
    // A host trace: what the jobs did up to their stop, routed to each by its process tree.
    const taken = this.options.hostTrace === undefined ? undefined : await this.options.hostTrace.take();
    if (taken !== undefined) this.router.route(taken.events);
    await this.options.hostTrace?.pause();
    const commands: BackgroundResult[] = [];
    for (const job of report.jobs) {
      const state = states.get(job.job);
      if (state === undefined) continue;
      const text = job.trace.kept.toString('utf8');
      const parsed = state.parser === undefined ? this.router.stopJob(job.job) : [...state.parser.push(text), ...state.parser.end()];
      const denied = job.denials.map((d) => seccompEvent(d));
      const all = denied.length === 0 ? parsed : mergeByTime(parsed, denied);
      const room = Math.max(0, state.eventCap - state.eventsSoFar);
      const events = all.length > room ? all.slice(0, room) : all;
      commands.push({
        job: job.job,
        events,
        denials: events.filter((e) => e.kind !== 'unparsed' && e.denied === true),
        trace:
          state.parser === undefined
            ? { bytes: 0, truncated: (taken?.lost ?? 0) > 0, droppedEvents: all.length - events.length }
            : { bytes: job.trace.bytes, truncated: job.trace.bytes > job.trace.kept.length, droppedEvents: all.length - events.length },
        seccompDenials: job.denialsTotal,
        stopped: { count: job.stopped, info: job.stoppedInfo },
        ...(state.keepRawTrace ? { rawTrace: text } : {}),
      });
    }
    return { commands, leftover: { count: report.leftover, info: report.leftoverInfo } };
  }

  /**
   * Run one of the harness's own programs (`ab-launch --quarantine`, …) through the session's
   * agent, as a Docker exec would run it — as root, outside any sandbox: no launcher, no rules, no
   * trace — for one request instead of a Docker exec (exec create, start and inspect, and a runc
   * exec's CPU). For the harness's steps between the episode and validation, never an agent's
   * command: `argv` is the host's own. Refused while background commands or the persistent shell
   * run: a step that stops stray processes would pull them from under the agent's bookkeeping.
   */
  async runHarness(argv: readonly string[], options: { timeoutMs?: number; outputCapBytes?: number; stdin?: Uint8Array } = {}): Promise<ExecResult> {
    if (!this.canRunHarness) {
      throw new AuthbenchError('INTERNAL', 'runHarness: the session still runs background commands; stop them first');
    }
    const timeoutMs = options.timeoutMs ?? HARNESS_TIMEOUT_MS;
    const request = { argv, cwd: '/', outputCapBytes: options.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES, timeoutMs, ...(options.stdin === undefined ? {} : { stdin: options.stdin }) };
    const response = await (await this.client()).request(request, timeoutMs + AGENT_DEADLINE_MARGIN_MS);
    const o = response.outcome;
    return {
      exitCode: o.kind === 'exited' ? o.code : o.kind === 'signaled' ? 128 + o.signal : null,
      timedOut: o.kind === 'timedOut',
      stdout: response.stdout.toString('utf8'),
      stderr: response.stderr.toString('utf8'),
      stdoutTruncated: response.stdoutBytes > response.stdout.length,
      stderrTruncated: response.stderrBytes > response.stderr.length,
      durationMs: response.durationUs / 1000,
    };
  }

  /** Stop the agent, if one runs (it kills whatever commands left). The container stays. Idempotent. */
  async close(): Promise<void> {
    this.background.clear();
    this.shell = undefined;
    const agent = this.agent;
    this.agent = undefined;
    if (agent === undefined) return;
    const client = await agent.catch(() => undefined);
    await client?.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private async send(request: {
    argv: readonly string[];
    workdir: string;
    rules: string;
    trace: boolean;
    env?: Readonly<Record<string, string>>;
    stdin?: string;
    timeoutMs?: number;
    outputCapBytes?: number;
    traceCapBytes?: number;
    keepBackground?: boolean;
    hostTraced?: boolean;
    shell?: { nonce: string; reset?: boolean };
  }): Promise<AgentResponse> {
    const client = await this.client();
    const deadline = (request.timeoutMs ?? NO_TIMEOUT_DEADLINE_MS) + AGENT_DEADLINE_MARGIN_MS;
    return client.request(
      {
        argv: request.argv,
        cwd: request.workdir,
        outputCapBytes: request.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES,
        channel: true,
        rules: request.rules,
        ...(request.trace ? { traceCapBytes: request.traceCapBytes ?? TRACE_CAPS.bytes } : {}),
        ...(this.options.pinCpu === undefined ? {} : { cpu: this.options.pinCpu }),
        ...(request.env === undefined ? {} : { env: request.env }),
        ...(request.stdin === undefined ? {} : { stdin: request.stdin }),
        ...(request.timeoutMs === undefined ? {} : { timeoutMs: request.timeoutMs }),
        ...(request.keepBackground === true ? { keepBackground: true } : {}),
        ...(request.hostTraced === true ? { hostTraced: true } : {}),
        ...(request.shell === undefined ? {} : { shell: request.shell }),
      },
      deadline,
    );
  }

  /** The session's agent; one that died since the last command is replaced (a command cannot kill it). */
  private async client(): Promise<AgentClient> {
    if (this.agent !== undefined) {
      const current = await this.agent.catch(() => undefined);
      if (current?.alive === true) return current;
      this.agent = undefined;
    }
    const started = AgentClient.start(this.container);
    this.agent = started;
    try {
      return await started;
    } catch (e) {
      this.agent = undefined;
      throw e;
    }
  }
}

/** A harness step through the agent (runHarness) unless it says: the quarantine takes well under a second. */
const HARNESS_TIMEOUT_MS = 60_000;

/** What the output cap keeps per stream when the caller does not say (the exec path's default). */
const DEFAULT_OUTPUT_CAP_BYTES = 1024 * 1024;

function describeOutcome(exec: ExecResult): string {
  if (exec.timedOut) return 'timed out';
  return `exit ${String(exec.exitCode)}${exec.stderr.trim() === '' ? '' : `: ${exec.stderr.trim().split('\n').at(-1) ?? ''}`}`;
}

/**
 * The agent's answer as an exec result. A signal death reads as 128 + signal,
 * as Docker reports it; a timeout has no exit code.
 */
export function execResultOf(r: AgentResponse): ExecResult {
  const exitCode = r.outcome.kind === 'exited' ? r.outcome.code : r.outcome.kind === 'signaled' ? 128 + r.outcome.signal : null;
  return {
    exitCode,
    timedOut: r.outcome.kind === 'timedOut',
    stdout: r.stdout.toString('utf8'),
    stderr: r.stderr.toString('utf8'),
    stdoutTruncated: r.stdoutBytes > r.stdout.length,
    stderrTruncated: r.stderrBytes > r.stderr.length,
    durationMs: Math.round(r.durationUs / 1000),
  };
}

/** Two time-ordered event lists as one (strace's and the agent's seccomp records share the wall clock). */
function mergeByTime(a: readonly TraceEvent[], b: readonly TraceEvent[]): TraceEvent[] {
  const out: TraceEvent[] = [];
  let i = 0;
  let j = 0;
  const ts = (e: TraceEvent | undefined): number => (e === undefined ? Infinity : (e.ts ?? Infinity));
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && ts(a[i]) <= ts(b[j]))) out.push(a[i++] as TraceEvent);
    else out.push(b[j++] as TraceEvent);
  }
  return out;
}

/**
 * Drop what the launcher did before exec'ing the command: strace's first exec
 * is ab-launch itself; everything that pid did until its next exec attempt is setup.
 */
export function dropLauncherSetup(events: readonly TraceEvent[]): TraceEvent[] {
  const first = events.find((e) => e.kind === 'exec');
  if (first === undefined || first.kind !== 'exec' || first.path !== LAUNCHER_PATH) return [...events];
  const pid = first.pid;
  let inSetup = true;
  const out: TraceEvent[] = [];
  for (const e of events) {
    if (inSetup && e.pid === pid) {
      // execvp's attempts along PATH are the command's, whether or not they succeed.
      if (e.kind === 'exec' && e !== first) inSetup = false;
      else continue;
    }
    out.push(e);
  }
  return out;
}
