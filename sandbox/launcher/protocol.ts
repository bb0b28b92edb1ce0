/**
 * The wire format between SandboxSession and the in-container agent
 * (`ab-launch --serve`, ab-serve.c, which mirrors the constants here). Pure.
 *
 * A frame is  [u32 BE length][u8 type][fields…]  where length counts the type
 * byte and the fields; a field is  [u8 tag][u32 BE length][value].  Values are
 * raw bytes, so output, stdin and file contents need no escaping. Numbers are
 * big-endian u32 or u64 values. Frame types:
 *   H hello   agent → host, once at start: VERSION, PID, PIDS… (processes already
 *             in the container: the harness's)
 *   R run     host → agent: ARGV…, ENV…, CWD, STDIN, TIMEOUT_MS, OUTPUT_CAP, PUT…,
 *             COLLECT…, TRACE_CAP, CHANNEL, RULES, CPU, KEEP_BACKGROUND, SHELL, SHELL_RESET, HOST_TRACED.
 *             SHELL (a nonce, 16–64 lowercase hex digits): a call of the session's persistent
 *             shell (ab-serve.c run_shell_call): STDIN is written to the shell (started from ARGV,
 *             CWD, ENV, RULES when none is alive) and the call ends at the line `<nonce> <status>`
 *             the shell writes back on that socket. SHELL_RESET: end the shell, run nothing.
 *   L list    host → agent: ARGV… (roots): the filesystem listing the policy
 *             compiler needs, answered with a done frame whose STDOUT holds it
 *   D done    agent → host: EXIT | SIGNAL | TIMED_OUT, STDOUT, STDOUT_BYTES, STDERR,
 *             STDERR_BYTES, DURATION_US, MAIN_PID, TRACE, TRACE_BYTES,
 *             CHANNEL_MSG…, DENIAL…, DENIALS_TOTAL, LEFTOVER, LEFTOVER_INFO,
 *             SURVIVORS, SURVIVOR_INFO, SPAWN_ERROR, BACKGROUND_JOB, FILE… (one per
 *             COLLECT, in order). BACKGROUND_JOB: the survivors were kept running (the
 *             request asked for it with KEEP_BACKGROUND) as that background command.
 *             Shell calls add SHELL_STARTED (this call started the shell), SHELL_ENDED
 *             (reason: the shell is gone after this call), SHELL_FORGED (u32: delimiter lines
 *             without the nonce; on every call that ran, so it marks a shell answer), SHELL_NOT_RUN (the call did not run: the answer is the
 *             ended shell's tail); BACKGROUND_JOB is then the shell, while it lives.
 *             CUT (empty, only with TIMED_OUT): the host cut the command (`ab-launch --cut-serve`,
 *             the storage guard): its processes were stopped as on a timeout.
 *   S stop    host → agent, no fields: stop every background command (episode end)
 *   B background agent → host, the stop's answer: LEFTOVER, LEFTOVER_INFO (processes no
 *             tracer followed), then per background command JOB, TRACE, TRACE_BYTES,
 *             DENIAL…, DENIALS_TOTAL, SURVIVORS, SURVIVOR_INFO (the processes stopped)
 *   E error   agent → host: MESSAGE (the request was not run)
 * PUT is `<absolute path> NUL <content>`: written (parents created) before the
 * command runs. FILE is `1 <content>` for a regular file read back after the
 * command, or `0 <reason>` when there is none.
 *
 * The wrappers' descriptors: with TRACE_CAP the command finds the write end of
 * the trace pipe at fd 3 (strace -o /proc/self/fd/3), with CHANNEL the
 * launcher's socket at fd 4 (ab-launch --channel 4), with RULES a sealed memfd
 * holding them at fd 5 (ab-launch --rules-fd 5). Nothing of the harness is in
 * the container's filesystem for a command to read, forge or void.
 */
import { AuthbenchError } from '../../core/index.ts';

export const AGENT_PROTOCOL_VERSION = 5;

/**
 * The container's main process with the first session agent as its child (ab-launch.c
 * idle_serving): the host attaches to it before the container starts, wakes the agent with this
 * byte (mirrored in ab-serve.c), and learns that it ended from one stderr line (MAIN_AGENT_ENDED).
 */
export const MAIN_AGENT_ARGV_TAIL = ['--idle', '--serve-stdin'] as const;
export const AGENT_WAKE_BYTE = 0x57;
const MAIN_AGENT_ENDED = /^ab-launch --idle: the session agent ended \((exit|signal) (\d+)\)$/;

/**
 * The exit code in the main process's line saying its agent ended (a signal reads as 128 +
 * signal, as Docker reports it), or undefined when the line is not that one. Pure.
 */
export function mainAgentEnded(line: string): number | undefined {
  const m = MAIN_AGENT_ENDED.exec(line);
  if (m === null) return undefined;
  const n = Number(m[2]);
  return m[1] === 'signal' ? 128 + n : n;
}

/** Descriptor numbers the agent places for the command's wrappers (mirrored in ab-serve.c). */
export const AGENT_FDS = { trace: 3, channel: 4, rules: 5 } as const;

export const FRAME_TYPE = {
  hello: 0x48, // 'H'
  run: 0x52, // 'R'
  list: 0x4c, // 'L'
  stop: 0x53, // 'S'
  done: 0x44, // 'D'
  background: 0x42, // 'B'
  error: 0x45, // 'E'
} as const;

export const TAG = {
  version: 1,
  pid: 2,
  message: 3,
  pids: 4,
  argv: 10,
  env: 11,
  cwd: 12,
  stdin: 13,
  timeoutMs: 14,
  outputCap: 15,
  put: 16,
  collect: 17,
  traceCap: 18,
  channel: 19,
  rules: 20,
  cpu: 21,
  keepBackground: 22,
  exit: 30,
  signal: 31,
  timedOut: 32,
  stdout: 33,
  stdoutBytes: 34,
  stderr: 35,
  stderrBytes: 36,
  durationUs: 37,
  file: 38,
  trace: 39,
  traceBytes: 40,
  traceLimit: 41,
  channelMsg: 42,
  denial: 43,
  denialsTotal: 44,
  leftover: 45,
  spawnError: 46,
  mainPid: 47,
  leftoverInfo: 48,
  survivors: 49,
  survivorInfo: 50,
  backgroundJob: 51,
  job: 52,
  shell: 53,
  shellReset: 54,
  shellStarted: 55,
  shellEnded: 56,
  shellForged: 57,
  shellNotRun: 58,
  hostTraced: 59,
  cut: 60,
} as const;

const FRAME_HEADER = 5;
const FIELD_HEADER = 5;
const U32_MAX = 0xffff_ffff;
/** Responses carry whole strace outputs; beyond this the stream is assumed corrupt. */
export const DEFAULT_MAX_FRAME_BYTES = 1024 * 1024 * 1024;

export interface Field {
  tag: number;
  value: Buffer;
}

export interface Frame {
  type: number;
  fields: Field[];
}

function protocolError(message: string): AuthbenchError {
  return new AuthbenchError('SANDBOX_UNAVAILABLE', `sandbox agent protocol: ${message}`);
}

export function encodeFrame(frame: Frame): Buffer {
  const parts: Buffer[] = [];
  let length = 1;
  for (const f of frame.fields) {
    if (!Number.isInteger(f.tag) || f.tag < 0 || f.tag > 255) throw protocolError(`field tag ${f.tag} is not a byte`);
    const header = Buffer.alloc(FIELD_HEADER);
    header.writeUInt8(f.tag, 0);
    header.writeUInt32BE(f.value.length, 1);
    parts.push(header, f.value);
    length += FIELD_HEADER + f.value.length;
  }
  if (length > U32_MAX) throw protocolError(`frame of ${length} bytes does not fit a u32 length`);
  const head = Buffer.alloc(FRAME_HEADER);
  head.writeUInt32BE(length, 0);
  head.writeUInt8(frame.type, 4);
  return Buffer.concat([head, ...parts]);
}

/** Split a frame body into fields; throws when a field overruns it. */
export function decodeFields(body: Buffer): Field[] {
  const fields: Field[] = [];
  let off = 0;
  while (off < body.length) {
    if (body.length - off < FIELD_HEADER) throw protocolError('truncated field header');
    const tag = body.readUInt8(off);
    const len = body.readUInt32BE(off + 1);
    off += FIELD_HEADER;
    if (len > body.length - off) throw protocolError(`field ${tag} overruns its frame (${len} bytes, ${body.length - off} left)`);
    fields.push({ tag, value: body.subarray(off, off + len) });
    off += len;
  }
  return fields;
}

/**
 * Reassembles frames from a byte stream cut at arbitrary points. A malformed
 * frame (zero length, over the limit, unknown type, bad fields) throws, and the
 * decoder stays broken: with the framing lost nothing after it can be trusted.
 */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private broken: AuthbenchError | undefined;
  private readonly maxFrameBytes: number;

  constructor(maxFrameBytes = DEFAULT_MAX_FRAME_BYTES) {
    this.maxFrameBytes = maxFrameBytes;
  }

  push(chunk: Buffer): Frame[] {
    if (this.broken !== undefined) throw this.broken;
    if (chunk.length > 0) {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
    }
    const out: Frame[] = [];
    try {
      for (;;) {
        if (this.buffered < FRAME_HEADER) break;
        const head = this.peek(FRAME_HEADER);
        const length = head.readUInt32BE(0);
        const type = head.readUInt8(4);
        if (length < 1) throw protocolError('frame of length 0');
        if (length > this.maxFrameBytes) throw protocolError(`frame of ${length} bytes exceeds the ${this.maxFrameBytes}-byte limit`);
        if (!(Object.values(FRAME_TYPE) as number[]).includes(type)) throw protocolError(`unknown frame type 0x${type.toString(16)}`);
        if (this.buffered < 4 + length) break;
        const whole = this.take(4 + length);
        out.push({ type, fields: decodeFields(whole.subarray(FRAME_HEADER)) });
      }
    } catch (e) {
      this.broken = e instanceof AuthbenchError ? e : protocolError(String(e));
      throw this.broken;
    }
    return out;
  }

  /** Bytes of an incomplete frame held back (0 between frames). */
  get pendingBytes(): number {
    return this.buffered;
  }

  private peek(n: number): Buffer {
    if (this.chunks[0] !== undefined && this.chunks[0].length >= n) return this.chunks[0].subarray(0, n);
    const joined = Buffer.concat(this.chunks);
    this.chunks = [joined];
    return joined.subarray(0, n);
  }

  private take(n: number): Buffer {
    const joined = this.chunks.length === 1 && this.chunks[0] !== undefined ? this.chunks[0] : Buffer.concat(this.chunks);
    const taken = joined.subarray(0, n);
    const rest = joined.subarray(n);
    this.chunks = rest.length === 0 ? [] : [rest];
    this.buffered = rest.length;
    return taken;
  }
}

// ---- typed messages ----

export interface AgentRequest {
  argv: readonly string[];
  cwd?: string;
  /** Added to (or overriding) the agent's environment, which is the container's. */
  env?: Readonly<Record<string, string>>;
  stdin?: string | Uint8Array;
  /** Kill the command's process group after this long (none when absent). */
  timeoutMs?: number;
  /** Per-stream bytes kept; the rest is counted and dropped. */
  outputCapBytes: number;
  /** Written before the command runs, parents created. */
  puts?: readonly { path: string; content: string | Uint8Array }[];
  /** Read back after the command, in this order. */
  collect?: readonly string[];
  /** Give the command a trace pipe at fd 3, keeping this many bytes; more kills the command (trace limit). */
  traceCapBytes?: number;
  /** Give the command the launcher's channel at fd 4. */
  channel?: boolean;
  /** Rules text for the launcher, as a sealed memfd at fd 5. */
  rules?: string;
  /** Pin the command (tracer and tracee) to this CPU. */
  cpu?: number;
  /**
   * Traced: when the main process ends, processes the tracer still follows keep running (traced,
   * in the launch's sandbox) as a background command until a stop request, rather than being
   * stopped. The agent keeps at most a few; beyond them, or when any process escaped the tracer,
   * they are stopped as without it.
   */
  keepBackground?: boolean;
  /**
   * The argv's tracer is a keeper (`ab-launch --keep`): the host traces the container with eBPF,
   * and the command's processes are the keeper's by ancestry, not by ptrace. Needs a trace cap
   * (the keeper writes the two lines the agent reads). A shell call's keeper holds the shell.
   */
  hostTraced?: boolean;
  /** A call of the persistent shell, ended by the line `<nonce> <status>` (see SHELL above); `reset`: end the shell instead. */
  shell?: { nonce: string; reset?: boolean };
}

/** One syscall a launcher's seccomp filter refused, as the agent recorded it (answered EPERM). */
export interface SeccompDenial {
  /** Wall clock, seconds since the epoch with microseconds (strace -ttt's clock). */
  time: number;
  pid: number;
  /** x86_64 syscall number. */
  nr: number;
  /** The six raw arguments; 64-bit values as bigint. */
  args: readonly bigint[];
}

export type AgentOutcome = { kind: 'exited'; code: number } | { kind: 'signaled'; signal: number } | { kind: 'timedOut' };

export interface AgentResponse {
  outcome: AgentOutcome;
  stdout: Buffer;
  stderr: Buffer;
  /** Everything the command wrote, including what the cap dropped. */
  stdoutBytes: number;
  stderrBytes: number;
  durationUs: number;
  /** One per collected path: its content, or undefined with the reason it could not be read. */
  files: ({ present: true; content: Buffer } | { present: false; reason: string })[];
  /** The command's main process (the tracer, when traced): a harness process while it runs. */
  mainPid?: number;
  /** With a trace pipe: what was kept (up to the cap) and everything strace wrote. */
  trace?: { kept: Buffer; bytes: number };
  /** What the launcher said on its channel, in order (report, failure, exec failure). */
  channelMessages: Buffer[];
  /** Syscalls the launcher's filter refused (first MAX recorded) and how many there were in all. */
  denials: SeccompDenial[];
  denialsTotal: number;
  /**
   * Processes still alive below the agent after the main process ended (killed), and who they
   * were (`pid comm` per line, the first few). After a traced command: those the tracer did not follow.
   */
  leftover: number;
  leftoverInfo: string;
  /**
   * Traced commands: processes the tracer still followed when the main process ended (a daemon,
   * a background job), killed so that the command ends; `pid comm` per line, the first few.
   */
  survivors: number;
  survivorInfo: string;
  /** Why the command did not start at all (`chdir …`, `exec …`), from the agent's side. */
  spawnError?: string;
  /** The survivors were kept running as this background command (their trace continues there). */
  backgroundJob?: number;
  /** Shell calls: what happened to the persistent shell (absent for other requests). */
  shell?: ShellReport;
  /** The host cut the command (SandboxSession.cut): stopped as on a timeout (the outcome is timedOut). */
  cut?: true;
}

export interface ShellReport {
  /** This call started the shell. */
  started: boolean;
  /** The shell is gone after this call, and why; the next call starts a fresh one. */
  ended?: string;
  /** Lines on the delimiter channel that did not carry this call's nonce. */
  forged: number;
  /** The call did not run: the answer holds the ended shell's tail (or there was no shell to reset). */
  notRun: boolean;
}

/** What a background command did after its main process ended, until the stop request. */
export interface BackgroundJobReport {
  job: number;
  /** The trace from where the command's response left it. */
  trace: { kept: Buffer; bytes: number };
  denials: SeccompDenial[];
  denialsTotal: number;
  /** Processes still running at the stop, killed then; `pid comm` per line, the first few. */
  stopped: number;
  stoppedInfo: string;
}

export interface BackgroundReport {
  jobs: BackgroundJobReport[];
  /** Processes below the agent no tracer followed (escaped: evidence of tampering), killed. */
  leftover: number;
  leftoverInfo: string;
}

export interface AgentHello {
  version: number;
  pid: number;
  /** Processes that were in the container before the agent: pid 1, the idle process. */
  harnessPids: number[];
}

const u32 = (n: number, what: string): Buffer => {
  if (!Number.isInteger(n) || n < 0 || n > U32_MAX) throw protocolError(`${what} ${n} is not a u32`);
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n, 0);
  return b;
};

const text = (s: string, what: string): Buffer => {
  if (s.includes('\0')) throw new AuthbenchError('INVALID_ARGUMENT', `${what} contains a NUL byte`, { field: what });
  return Buffer.from(s, 'utf8');
};

const bytes = (v: string | Uint8Array): Buffer => (typeof v === 'string' ? Buffer.from(v, 'utf8') : Buffer.from(v.buffer, v.byteOffset, v.byteLength));

export function encodeRequest(req: AgentRequest): Buffer {
  if (req.argv.length === 0) throw new AuthbenchError('INVALID_ARGUMENT', 'agent request: empty argv');
  const fields: Field[] = req.argv.map((a, i) => ({ tag: TAG.argv, value: text(a, `argv.${i}`) }));
  for (const [k, v] of Object.entries(req.env ?? {})) {
    if (k === '' || k.includes('=')) throw new AuthbenchError('INVALID_ARGUMENT', `environment variable name ${JSON.stringify(k)} is not valid`, { field: 'env' });
    fields.push({ tag: TAG.env, value: text(`${k}=${v}`, `env.${k}`) });
  }
  if (req.cwd !== undefined) fields.push({ tag: TAG.cwd, value: text(req.cwd, 'cwd') });
  if (req.stdin !== undefined) fields.push({ tag: TAG.stdin, value: bytes(req.stdin) });
  if (req.timeoutMs !== undefined) {
    if (!Number.isFinite(req.timeoutMs) || req.timeoutMs <= 0) {
      throw new AuthbenchError('INVALID_ARGUMENT', `timeout must be a positive number of ms, got ${req.timeoutMs}`, { field: 'timeoutMs' });
    }
    // 0 on the wire means "no timeout"; never round down to it.
    fields.push({ tag: TAG.timeoutMs, value: u32(Math.min(Math.max(1, Math.ceil(req.timeoutMs)), U32_MAX), 'timeout') });
  }
  fields.push({ tag: TAG.outputCap, value: u32(Math.min(req.outputCapBytes, U32_MAX), 'output cap') });
  for (const [i, p] of (req.puts ?? []).entries()) {
    if (!p.path.startsWith('/')) throw new AuthbenchError('INVALID_ARGUMENT', `agent put path must be absolute: ${p.path}`, { field: `puts.${i}` });
    fields.push({ tag: TAG.put, value: Buffer.concat([text(p.path, `puts.${i}`), Buffer.from([0]), bytes(p.content)]) });
  }
  for (const [i, c] of (req.collect ?? []).entries()) fields.push({ tag: TAG.collect, value: text(c, `collect.${i}`) });
  if (req.traceCapBytes !== undefined) {
    if (!Number.isInteger(req.traceCapBytes) || req.traceCapBytes < 1) {
      throw new AuthbenchError('INVALID_ARGUMENT', `trace cap must be a positive number of bytes, got ${req.traceCapBytes}`, { field: 'traceCapBytes' });
    }
    fields.push({ tag: TAG.traceCap, value: u32(Math.min(req.traceCapBytes, U32_MAX), 'trace cap') });
  }
  if (req.channel === true) fields.push({ tag: TAG.channel, value: Buffer.alloc(0) });
  if (req.rules !== undefined) fields.push({ tag: TAG.rules, value: Buffer.from(req.rules, 'utf8') });
  if (req.cpu !== undefined) fields.push({ tag: TAG.cpu, value: u32(req.cpu, 'cpu') });
  if (req.keepBackground === true) fields.push({ tag: TAG.keepBackground, value: Buffer.alloc(0) });
  if (req.hostTraced === true) {
    if (req.traceCapBytes === undefined) throw new AuthbenchError('INVALID_ARGUMENT', 'a host-traced request needs a trace cap', { field: 'hostTraced' });
    fields.push({ tag: TAG.hostTraced, value: Buffer.alloc(0) });
  }
  if (req.shell !== undefined) {
    if (!SHELL_NONCE.test(req.shell.nonce)) throw new AuthbenchError('INVALID_ARGUMENT', 'a shell nonce is 16 to 64 lowercase hex digits', { field: 'shell.nonce' });
    fields.push({ tag: TAG.shell, value: Buffer.from(req.shell.nonce, 'ascii') });
    if (req.shell.reset === true) fields.push({ tag: TAG.shellReset, value: Buffer.alloc(0) });
  }
  return encodeFrame({ type: FRAME_TYPE.run, fields });
}

const SHELL_NONCE = /^[0-9a-f]{16,64}$/;

/** The episode's end: stop every background command and hand back what they did since. */
export function encodeStopRequest(): Buffer {
  return encodeFrame({ type: FRAME_TYPE.stop, fields: [] });
}

/** A listing request: every entry under `roots`, in the format sandbox/paths parses. */
export function encodeListRequest(roots: readonly string[]): Buffer {
  if (roots.length === 0) throw new AuthbenchError('INVALID_ARGUMENT', 'agent list request: no roots');
  return encodeFrame({ type: FRAME_TYPE.list, fields: roots.map((r, i) => ({ tag: TAG.argv, value: text(r, `roots.${i}`) })) });
}

/** One DENIAL field: u64 wall µs, u32 pid, u32 nr, 6 × u64 args. */
function decodeDenial(f: Field): SeccompDenial {
  if (f.value.length !== 64) throw protocolError(`denial field should be 64 bytes, is ${f.value.length}`);
  const us = f.value.readBigUInt64BE(0);
  const args: bigint[] = [];
  for (let i = 0; i < 6; i++) args.push(f.value.readBigUInt64BE(16 + 8 * i));
  return { time: Number(us) / 1e6, pid: f.value.readUInt32BE(8), nr: f.value.readUInt32BE(12), args };
}

function readU32(f: Field): number {
  if (f.value.length !== 4) throw protocolError(`field ${f.tag} should be 4 bytes, is ${f.value.length}`);
  return f.value.readUInt32BE(0);
}

function readU64(f: Field): number {
  if (f.value.length !== 8) throw protocolError(`field ${f.tag} should be 8 bytes, is ${f.value.length}`);
  const v = f.value.readBigUInt64BE(0);
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw protocolError(`field ${f.tag} value ${v} is out of range`);
  return Number(v);
}

export function decodeHello(frame: Frame): AgentHello {
  if (frame.type !== FRAME_TYPE.hello) throw protocolError(`expected a hello frame, got type 0x${frame.type.toString(16)}`);
  let version: number | undefined;
  let pid: number | undefined;
  const harnessPids: number[] = [];
  for (const f of frame.fields) {
    if (f.tag === TAG.version) version = readU32(f);
    else if (f.tag === TAG.pid) pid = readU32(f);
    else if (f.tag === TAG.pids) harnessPids.push(readU32(f));
  }
  if (version === undefined || pid === undefined) throw protocolError('hello frame lacks the version or pid');
  return { version, pid, harnessPids };
}

/** A done frame as a response; an error frame throws the agent's message. */
export function decodeResponse(frame: Frame): AgentResponse {
  if (frame.type === FRAME_TYPE.error) {
    const message = frame.fields.find((f) => f.tag === TAG.message)?.value.toString('utf8') ?? '(no message)';
    throw new AuthbenchError('SANDBOX_UNAVAILABLE', `the sandbox agent refused the request: ${message}`);
  }
  if (frame.type !== FRAME_TYPE.done) throw protocolError(`expected a done frame, got type 0x${frame.type.toString(16)}`);
  let outcome: AgentOutcome | undefined;
  const setOutcome = (o: AgentOutcome): void => {
    if (outcome !== undefined) throw protocolError('done frame carries more than one outcome');
    outcome = o;
  };
  let stdout: Buffer | undefined;
  let stderr: Buffer | undefined;
  let stdoutBytes: number | undefined;
  let stderrBytes: number | undefined;
  let durationUs: number | undefined;
  const files: AgentResponse['files'] = [];
  let mainPid: number | undefined;
  let traceKept: Buffer | undefined;
  let traceBytes: number | undefined;
  const channelMessages: Buffer[] = [];
  const denials: SeccompDenial[] = [];
  let denialsTotal = 0;
  let leftover = 0;
  let leftoverInfo = '';
  let survivors = 0;
  let survivorInfo = '';
  let spawnError: string | undefined;
  let backgroundJob: number | undefined;
  let shell: ShellReport | undefined;
  let cut = false;
  const shellReport = (): ShellReport => (shell ??= { started: false, forged: 0, notRun: false });
  for (const f of frame.fields) {
    switch (f.tag) {
      case TAG.exit:
        setOutcome({ kind: 'exited', code: readU32(f) });
        break;
      case TAG.signal:
        setOutcome({ kind: 'signaled', signal: readU32(f) });
        break;
      case TAG.timedOut:
        setOutcome({ kind: 'timedOut' });
        break;
      case TAG.stdout:
        stdout = f.value;
        break;
      case TAG.stderr:
        stderr = f.value;
        break;
      case TAG.stdoutBytes:
        stdoutBytes = readU64(f);
        break;
      case TAG.stderrBytes:
        stderrBytes = readU64(f);
        break;
      case TAG.durationUs:
        durationUs = readU64(f);
        break;
      case TAG.file: {
        const flag = f.value[0];
        if (flag === 1) files.push({ present: true, content: f.value.subarray(1) });
        else if (flag === 0) files.push({ present: false, reason: f.value.subarray(1).toString('utf8') });
        else throw protocolError('file field without a presence byte');
        break;
      }
      case TAG.mainPid:
        mainPid = readU32(f);
        break;
      case TAG.trace:
        traceKept = f.value;
        break;
      case TAG.traceBytes:
        traceBytes = readU64(f);
        break;
      case TAG.traceLimit:
        // Retired (a trace over its cap is cut, not the command); ignored from older agents.
        break;
      case TAG.channelMsg:
        channelMessages.push(f.value);
        break;
      case TAG.denial:
        denials.push(decodeDenial(f));
        break;
      case TAG.denialsTotal:
        denialsTotal = readU64(f);
        break;
      case TAG.leftover:
        leftover = readU32(f);
        break;
      case TAG.leftoverInfo:
        leftoverInfo = f.value.toString('utf8');
        break;
      case TAG.survivors:
        survivors = readU32(f);
        break;
      case TAG.survivorInfo:
        survivorInfo = f.value.toString('utf8');
        break;
      case TAG.spawnError:
        spawnError = f.value.toString('utf8');
        break;
      case TAG.backgroundJob:
        backgroundJob = readU32(f);
        break;
      case TAG.shellStarted:
        shellReport().started = true;
        break;
      case TAG.shellEnded:
        shellReport().ended = f.value.toString('utf8');
        break;
      case TAG.shellForged:
        shellReport().forged = readU32(f);
        break;
      case TAG.shellNotRun:
        shellReport().notRun = true;
        break;
      case TAG.cut:
        if (f.value.length !== 0) throw protocolError(`cut field should be empty, is ${f.value.length} bytes`);
        if (cut) throw protocolError('done frame carries the cut twice');
        cut = true;
        break;
      default:
        throw protocolError(`unknown field ${f.tag} in a done frame`);
    }
  }
  if (outcome === undefined || stdout === undefined || stderr === undefined || stdoutBytes === undefined || stderrBytes === undefined || durationUs === undefined) {
    throw protocolError('done frame lacks a required field');
  }
  if (stdout.length > stdoutBytes || stderr.length > stderrBytes) throw protocolError('done frame keeps more output than was written');
  if (cut && outcome.kind !== 'timedOut') throw protocolError('done frame says the command was cut but not that it was stopped');
  if ((traceKept === undefined) !== (traceBytes === undefined)) throw protocolError('done frame carries half a trace');
  if (traceKept !== undefined && traceBytes !== undefined && traceKept.length > traceBytes) throw protocolError('done frame keeps more trace than was written');
  return {
    outcome,
    stdout,
    stderr,
    stdoutBytes,
    stderrBytes,
    durationUs,
    files,
    channelMessages,
    denials,
    denialsTotal: Math.max(denialsTotal, denials.length),
    leftover,
    leftoverInfo,
    survivors,
    survivorInfo,
    ...(mainPid === undefined ? {} : { mainPid }),
    ...(traceKept === undefined || traceBytes === undefined ? {} : { trace: { kept: traceKept, bytes: traceBytes } }),
    ...(spawnError === undefined ? {} : { spawnError }),
    ...(backgroundJob === undefined ? {} : { backgroundJob }),
    ...(shell === undefined ? {} : { shell }),
    ...(cut ? { cut: true as const } : {}),
  };
}

/** The stop request's answer: fields after each JOB belong to that background command. */
export function decodeBackgroundReport(frame: Frame): BackgroundReport {
  if (frame.type === FRAME_TYPE.error) {
    const message = frame.fields.find((f) => f.tag === TAG.message)?.value.toString('utf8') ?? '(no message)';
    throw new AuthbenchError('SANDBOX_UNAVAILABLE', `the sandbox agent refused the stop request: ${message}`);
  }
  if (frame.type !== FRAME_TYPE.background) throw protocolError(`expected a background frame, got type 0x${frame.type.toString(16)}`);
  const report: BackgroundReport = { jobs: [], leftover: 0, leftoverInfo: '' };
  type Partial = { job: number; kept?: Buffer; bytes?: number; denials: SeccompDenial[]; denialsTotal: number; stopped: number; stoppedInfo: string };
  const partials: Partial[] = [];
  const current = (tag: number): Partial => {
    const last = partials.at(-1);
    if (last === undefined) throw protocolError(`field ${tag} before the first job of a background frame`);
    return last;
  };
  for (const f of frame.fields) {
    switch (f.tag) {
      case TAG.leftover:
        report.leftover = readU32(f);
        break;
      case TAG.leftoverInfo:
        report.leftoverInfo = f.value.toString('utf8');
        break;
      case TAG.job:
        partials.push({ job: readU32(f), denials: [], denialsTotal: 0, stopped: 0, stoppedInfo: '' });
        break;
      case TAG.trace:
        current(f.tag).kept = f.value;
        break;
      case TAG.traceBytes:
        current(f.tag).bytes = readU64(f);
        break;
      case TAG.denial:
        current(f.tag).denials.push(decodeDenial(f));
        break;
      case TAG.denialsTotal:
        current(f.tag).denialsTotal = readU64(f);
        break;
      case TAG.survivors:
        current(f.tag).stopped = readU32(f);
        break;
      case TAG.survivorInfo:
        current(f.tag).stoppedInfo = f.value.toString('utf8');
        break;
      default:
        throw protocolError(`unknown field ${f.tag} in a background frame`);
    }
  }
  for (const p of partials) {
    if (p.kept === undefined || p.bytes === undefined) throw protocolError(`background job ${p.job} carries no trace`);
    if (p.kept.length > p.bytes) throw protocolError(`background job ${p.job} keeps more trace than was written`);
    report.jobs.push({
      job: p.job,
      trace: { kept: p.kept, bytes: p.bytes },
      denials: p.denials,
      denialsTotal: Math.max(p.denialsTotal, p.denials.length),
      stopped: p.stopped,
      stoppedInfo: p.stoppedInfo,
    });
  }
  return report;
}
