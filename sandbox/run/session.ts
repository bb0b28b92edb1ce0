/**
 * The sandbox primitive: run one command inside a task container under a
 * policy, enforced by the kernel (ab-launch: Landlock + seccomp +
 * no_new_privs) and observed by strace. `authbench sandbox run`, gold
 * derivation and the execution agent all go through `SandboxSession.run`.
 *
 * Layering inside the container (argv, never a shell string):
 *   strace -f --seccomp-bpf … -o <trace> -- ab-launch --rules <r> --report <j> -- <cmd…>
 * strace sits outside the sandbox (it traces; the launcher's seccomp filter
 * forbids ptrace only for the command). Events the launcher itself causes
 * before it execs the command are dropped, so the trace is the command's.
 *
 * Transport: by default the session starts one long-lived agent in the
 * container (`ab-launch --serve`, one attached exec) and sends each command
 * as one request — files to write, argv, files to read back — instead of
 * ~4 Docker API calls. The agent only spawns that argv; enforcement is still
 * ab-launch's. If the agent cannot start, the session falls back to the
 * exec path and every result says which transport carried it.
 */
import { posix } from 'node:path';
import { AuthbenchError } from '../../core/index.ts';
import type { Container, ExecResult } from '../../docker/index.ts';
import { compilePolicy, type CompileResult, type PatternSet } from '../compile/index.ts';
import {
  HARNESS_ROOT,
  LAUNCHER_PATH,
  launcherArgv,
  launcherFailure,
  type FsAccess,
  parseLauncherReport,
  serializeRules,
  type LauncherReport,
  type LauncherRules,
} from '../launcher/index.ts';
import { parseSnapshot, snapshotCommand, type FsSnapshot } from '../paths/index.ts';
import type { Policy } from '../policy/index.ts';
import { parseStrace, straceArgv, type TraceEvent } from '../trace/index.ts';
import { AgentClient } from './agent-client.ts';
import { applyFileEvents } from './patch.ts';
import { AgentTransport, ExecTransport, type CommandOutcome, type CommandRequest, type Transport, type TransportKind } from './transport.ts';

/** Where per-command files live inside the container; outside every policy's reach by default. */
export const RUN_DIR = `${HARNESS_ROOT}/run`;

/** The enforcement a command actually ran under; recorded in every result. */
export interface Enforcement {
  /** `none`: no launcher (defense none / allow-all without enforcement). */
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
}

export interface SandboxResult {
  exec: ExecResult;
  /** The command's own events (launcher setup removed); empty when untraced. */
  events: TraceEvent[];
  /** Events the kernel refused with EACCES/EPERM. */
  denials: TraceEvent[];
  enforcement: Enforcement;
  /** Present when enforcing: the rules sent to the kernel and where they grant more than the policy. */
  compiled?: CompileResult;
  /** Set when the launcher itself failed (fail-closed): the command never ran. */
  launcherError?: string;
  /** The strace output as written, when asked for with keepRawTrace. */
  rawTrace?: string;
  /** Which path carried the command (always set by SandboxSession; optional for fakes). */
  transport?: TransportKind;
  /** Bytes the command wrote in total, including what the output cap dropped (agent transport only). */
  outputBytes?: { stdout: number; stderr: number };
}

export interface SessionOptions {
  /** Continue when Landlock/seccomp cannot be fully applied (never the default). */
  bestEffort?: boolean;
  /** Pin strace's tracee to one CPU (cheap --seccomp-bpf tracing). */
  pinCpu?: number;
  /**
   * `auto` (default): the in-container agent, else the exec path (recorded);
   * `agent`: the agent or a SANDBOX_UNAVAILABLE error; `exec`: one Docker exec per command.
   */
  transport?: 'auto' | TransportKind;
}

/** The transport a session ended up with, and why when it is not the one asked for. */
export interface TransportInfo {
  kind: TransportKind;
  /** Set when `auto` fell back to exec. */
  fallbackReason?: string;
}

/** File events that change the tree's shape and so invalidate the snapshot. */
const STRUCTURAL_OPS = new Set(['create', 'unlink', 'rename', 'mkdir', 'rmdir', 'link', 'symlink']);

/** Landlock rights without which no path can appear or disappear. */
const TREE_RIGHTS: ReadonlySet<FsAccess> = new Set<FsAccess>([
  'make_char',
  'make_dir',
  'make_reg',
  'make_sock',
  'make_fifo',
  'make_block',
  'make_sym',
  'remove_dir',
  'remove_file',
  'refer',
]);

/** Fully enforced rules that grant no tree-changing right: the command cannot have added or removed a path. */
function cannotChangeTree(compiled: CompileResult | undefined, enforcement: Enforcement): boolean {
  return compiled !== undefined && enforcement.level === 'full' && !compiled.rules.fs.some((r) => r.access.some((a) => TREE_RIGHTS.has(a)));
}

export class SandboxSession {
  readonly container: Container;
  readonly workdir: string;
  readonly options: SessionOptions;
  private abi: number | undefined;
  private snapshot: FsSnapshot | undefined;
  private counter = 0;
  private current: Promise<Transport> | undefined;
  private info: TransportInfo | undefined;

  constructor(container: Container, workdir: string, options: SessionOptions = {}) {
    this.container = container;
    this.workdir = workdir;
    this.options = options;
  }

  /** Landlock ABI of the kernel, probed once through the launcher itself. */
  async landlockAbi(): Promise<number> {
    if (this.abi !== undefined) return this.abi;
    const dir = this.nextDir();
    const rules = `${dir}/rules`;
    const report = `${dir}/report.json`;
    // Nothing is granted, so the exec of `true` is refused; the report is written before that.
    const { files } = await this.send({
      argv: launcherArgv({ rulesPath: rules, reportPath: report, bestEffort: true, cmd: ['true'] }),
      workdir: '/',
      put: { dir, files: { rules: serializeRules(EMPTY_RULES) } },
      collect: [report],
    });
    const text = files[0];
    if (text === undefined) {
      throw new AuthbenchError('SANDBOX_UNAVAILABLE', `the launcher wrote no report at ${report}`, {
        hint: `is ${LAUNCHER_PATH} installed in the container (installLauncher)?`,
      });
    }
    this.abi = parseLauncherReport(text.toString('utf8'), report).landlock_abi;
    return this.abi;
  }

  /** The image filesystem as the compiler needs it; refreshed when commands changed its shape. */
  async fsSnapshot(): Promise<FsSnapshot> {
    if (this.snapshot !== undefined) return this.snapshot;
    const roots = ['/', '/dev'];
    const { exec: out } = await this.send({ argv: snapshotCommand(roots), workdir: '/', outputCapBytes: 256 * 1024 * 1024, timeoutMs: 120_000, collect: [] });
    if (out.stdoutTruncated || out.timedOut) {
      throw new AuthbenchError('SANDBOX_UNAVAILABLE', 'could not list the container filesystem for the policy compiler', {
        details: [out.timedOut ? 'find timed out' : 'listing exceeded 256 MiB'],
      });
    }
    this.snapshot = parseSnapshot(out.stdout, roots);
    return this.snapshot;
  }

  invalidateSnapshot(): void {
    this.snapshot = undefined;
  }

  /**
   * After a command: patch the snapshot from its trace (what it created,
   * removed, renamed) instead of listing the container again. An untraced
   * command, or a tree-changing call whose outcome strace could not see,
   * forces a fresh listing before the next compile — unless the kernel kept
   * it from changing the tree at all (`readOnlyTree`).
   */
  private updateSnapshot(traced: boolean, events: readonly TraceEvent[], readOnlyTree: boolean): void {
    if (this.snapshot === undefined) return;
    if (!traced && readOnlyTree) return;
    const unknownOutcome = events.some((e) => e.kind === 'file' && e.result === null && STRUCTURAL_OPS.has(e.op));
    if (!traced || unknownOutcome) this.invalidateSnapshot();
    else this.snapshot = applyFileEvents(this.snapshot, events);
  }

  /** Compile a policy against the current filesystem (what `run` would enforce). */
  async compile(policy: Policy, implicit: PatternSet): Promise<CompileResult> {
    return compilePolicy(policy, await this.fsSnapshot(), { implicit, abi: await this.landlockAbi() });
  }

  async run(options: RunOptions): Promise<SandboxResult> {
    const trace = options.trace ?? true;
    const dir = this.nextDir();
    const tracePath = `${dir}/trace`;
    const reportPath = `${dir}/report.json`;
    const workdir = options.workdir ?? this.workdir;
    let compiled: CompileResult | undefined;
    let inner: string[] = [...options.cmd];
    let put: CommandRequest['put'];

    if (options.mode.kind === 'enforce') {
      compiled = await this.compile(options.mode.policy, options.mode.implicit);
      put = { dir, files: { rules: serializeRules(compiled.rules) } };
      inner = launcherArgv({
        rulesPath: `${dir}/rules`,
        reportPath,
        bestEffort: this.options.bestEffort === true,
        cmd: options.cmd,
      });
    } else if (trace) {
      put = { dir, files: { '.keep': '' } }; // strace -o needs the directory
    }
    const argv = trace
      ? straceArgv({ outputPath: tracePath, cmd: inner, ...(this.options.pinCpu === undefined ? {} : { pinCpu: this.options.pinCpu }) })
      : inner;
    const collect = [...(options.mode.kind === 'enforce' ? [reportPath] : []), ...(trace ? [tracePath] : [])];
    const outcome = await this.send({
      argv,
      workdir,
      collect,
      ...(put === undefined ? {} : { put }),
      ...(options.env === undefined ? {} : { env: options.env }),
      ...(options.stdin === undefined ? {} : { stdin: options.stdin }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.outputCapBytes === undefined ? {} : { outputCapBytes: options.outputCapBytes }),
    });
    const exec = outcome.exec;
    const collected = new Map(collect.map((path, i) => [path, outcome.files[i]]));

    let enforcement: Enforcement = { level: 'none', landlockAbi: await this.landlockAbi(), seccomp: false, bestEffort: false };
    let launcherError: string | undefined;
    if (options.mode.kind === 'enforce') {
      const reportText = collected.get(reportPath);
      const failure = launcherFailure(exec.exitCode, exec.stderr);
      if (reportText !== undefined) enforcement = enforcementFrom(parseLauncherReport(reportText.toString('utf8'), reportPath), this.options);
      // Fail closed: a launcher that refused (no report, or its own exit code with its own message) means the command never ran.
      if (reportText === undefined || (failure !== undefined && failure.name !== 'EXEC_FAILED' && failure.name !== 'NOT_FOUND')) {
        launcherError = failure?.line ?? `launcher wrote no report (exit ${String(exec.exitCode)}): ${exec.stderr.trim().split('\n').at(-1) ?? ''}`;
      }
    }

    let events: TraceEvent[] = [];
    let rawTrace: string | undefined;
    if (trace) {
      const raw = collected.get(tracePath);
      if (options.keepRawTrace === true && raw !== undefined) rawTrace = raw.toString('utf8');
      if (raw === undefined && !exec.timedOut) {
        throw new AuthbenchError('TRACE_UNREADABLE', `strace wrote no trace at ${tracePath}`, {
          details: exec.stderr.trim().split('\n').slice(-5),
          hint: 'the image needs strace on PATH',
        });
      }
      const all = raw === undefined ? [] : parseStrace(raw.toString('utf8'), { cwd: workdir });
      events = options.mode.kind === 'enforce' ? dropLauncherSetup(all) : all;
    }
    this.updateSnapshot(trace, events, cannotChangeTree(compiled, enforcement));
    const denials = events.filter((e) => e.kind !== 'unparsed' && e.kind !== 'process' && e.denied);
    return {
      exec,
      events,
      denials,
      enforcement,
      transport: outcome.transport,
      ...(compiled === undefined ? {} : { compiled }),
      ...(launcherError === undefined ? {} : { launcherError }),
      ...(rawTrace === undefined ? {} : { rawTrace }),
      ...(outcome.outputBytes === undefined ? {} : { outputBytes: outcome.outputBytes }),
    };
  }

  /** The transport in use (starting it if needed): which kind, and why `auto` fell back if it did. */
  async transportInfo(): Promise<TransportInfo> {
    await this.transport();
    if (this.info === undefined) throw new AuthbenchError('INTERNAL', 'sandbox session: transport chosen but not recorded');
    return this.info;
  }

  /** Stop the agent, if one runs. The container stays; a later run starts a new agent. Idempotent. */
  async close(): Promise<void> {
    const current = this.current;
    this.current = undefined;
    this.info = undefined;
    if (current === undefined) return;
    const t = await current.catch(() => undefined);
    await t?.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private async send(request: CommandRequest): Promise<CommandOutcome & { transport: TransportKind }> {
    const t = await this.transport();
    const outcome = await t.run(request);
    return { ...outcome, transport: t.kind };
  }

  /** The session's transport; an agent that died since the last command is replaced. */
  private async transport(): Promise<Transport> {
    if (this.current !== undefined) {
      const t = await this.current;
      if (t.usable) return t;
      this.current = undefined;
    }
    this.current = this.chooseTransport();
    try {
      return await this.current;
    } catch (e) {
      this.current = undefined;
      throw e;
    }
  }

  private async chooseTransport(): Promise<Transport> {
    const wanted = this.options.transport ?? 'auto';
    if (wanted === 'exec') {
      this.info = { kind: 'exec' };
      return new ExecTransport(this.container);
    }
    try {
      const client = await AgentClient.start(this.container);
      this.info = { kind: 'agent' };
      return new AgentTransport(client);
    } catch (e) {
      if (wanted === 'agent' || !(e instanceof AuthbenchError)) throw e;
      this.info = { kind: 'exec', fallbackReason: [e.message, ...e.details].join('; ') };
      return new ExecTransport(this.container);
    }
  }

  private nextDir(): string {
    this.counter += 1;
    return posix.join(RUN_DIR, String(this.counter));
  }
}

const EMPTY_RULES: LauncherRules = { fs: [], connectTcp: [], bindTcp: [], socketDomains: [], scope: [] };

function enforcementFrom(report: LauncherReport, options: SessionOptions): Enforcement {
  return {
    level: report.enforcement,
    landlockAbi: report.landlock_abi,
    seccomp: report.seccomp,
    bestEffort: options.bestEffort === true,
  };
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
