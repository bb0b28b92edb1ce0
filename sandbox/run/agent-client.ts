/**
 * The host end of the in-container agent (`ab-launch --serve`): one attached
 * exec (or the container's main process's stream, for the first session of a
 * task container) for the whole session, one request frame and one response
 * frame per command. Requests are serialised (the agent runs one command at a time).
 *
 * An agent that never says hello, or that is gone before a request could be
 * sent, is a harness fault (SANDBOX_UNAVAILABLE) carrying the tail of its
 * stderr. One that dies, breaks the framing or misses its deadline *while a
 * command runs* is SANDBOX_BROKEN: something happened inside the container
 * during that command, and the caller decides whose fault it was. Every wait
 * has a deadline: a stopped or dead agent ends the request, never the job.
 */
import { AuthbenchError } from '../../core/index.ts';
import type { AttachedExec, Container } from '../../docker/index.ts';
import {
  AGENT_PROTOCOL_VERSION,
  AGENT_WAKE_BYTE,
  decodeBackgroundReport,
  decodeHello,
  decodeResponse,
  encodeListRequest,
  encodeRequest,
  encodeStopRequest,
  FrameDecoder,
  LAUNCHER_PATH,
  mainAgentEnded,
  type AgentHello,
  type AgentRequest,
  type AgentResponse,
  type BackgroundReport,
  type Frame,
} from '../launcher/index.ts';

/** How long a fresh agent has to say hello (one exec start, then a static binary's startup). */
export const AGENT_START_TIMEOUT_MS = 15_000;
const STDERR_TAIL_BYTES = 4096;
const STDOUT_HEAD_BYTES = 300;

interface Waiter {
  resolve: (frame: Frame) => void;
  reject: (e: AuthbenchError) => void;
}

export interface AgentStartOptions {
  launcherPath?: string;
  startTimeoutMs?: number;
}

export class AgentClient {
  readonly hello: AgentHello;
  private readonly attached: AttachedExec;
  private readonly link: FrameLink;
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(attached: AttachedExec, link: FrameLink, hello: AgentHello) {
    this.attached = attached;
    this.link = link;
    this.hello = hello;
  }

  /**
   * Start the agent in the container and wait for its hello: the one below the container's main
   * process when it was started for that (taskenv: `ab-launch --idle --serve-stdin`) and nobody
   * took it yet, woken with one byte; else, or when that one fails to say hello (an engine that
   * lost its first output), one in an attached exec.
   */
  static async start(container: Container, options: AgentStartOptions = {}): Promise<AgentClient> {
    if (options.launcherPath === undefined && container.claimMain !== undefined) {
      const main = await AgentClient.open(container, options, 'main').catch(() => undefined);
      if (main !== undefined) return main;
    }
    if (container.attach === undefined) {
      throw new AuthbenchError('SANDBOX_UNAVAILABLE', 'this container offers no attached exec for the sandbox agent');
    }
    const started = await AgentClient.open(container, options, 'exec');
    if (started === undefined) throw new AuthbenchError('INTERNAL', 'sandbox agent: an exec gave no stream');
    return started;
  }

  /** The agent `how` reaches, once it said hello; undefined when there is none to claim. */
  private static async open(container: Container, options: AgentStartOptions, how: 'main' | 'exec'): Promise<AgentClient | undefined> {
    const launcher = options.launcherPath ?? LAUNCHER_PATH;
    const link = new FrameLink();
    let pid: number | undefined;
    const handlers = {
      onStdout: (chunk: Buffer) => link.push(chunk),
      onStderr: (chunk: Buffer) => link.pushStderr(chunk),
      killCommand: () => (pid === undefined ? undefined : [launcher, '--stop-serve', String(pid)]),
    };
    const attached = how === 'main' ? container.claimMain?.({ ...handlers, endedLine: mainAgentEnded }) : await container.attach?.({ cmd: [launcher, '--serve'], ...handlers });
    if (attached === undefined) return undefined;
    void attached.ended.then(({ exitCode }) => link.end(exitCode));
    attached.ref();
    try {
      if (how === 'main') await attached.write(Uint8Array.of(AGENT_WAKE_BYTE));
      const frame = await link.next(options.startTimeoutMs ?? AGENT_START_TIMEOUT_MS);
      const hello = decodeHello(frame);
      if (hello.version !== AGENT_PROTOCOL_VERSION) {
        throw new AuthbenchError('SANDBOX_UNAVAILABLE', `the sandbox agent speaks protocol ${hello.version}, expected ${AGENT_PROTOCOL_VERSION}`, {
          hint: 'the launcher in the container is stale: reinstall it (installLauncher)',
        });
      }
      pid = hello.pid;
      return new AgentClient(attached, link, hello);
    } catch (e) {
      await attached.close();
      if (!(e instanceof AuthbenchError)) throw e;
      // Docker reports a missing binary as text on stdout, which the framing then rejects: show that text.
      const head = link.stdoutHead.toString('utf8').replace(/[^\x20-\x7e]+/g, ' ').trim();
      throw new AuthbenchError(e.code, `the sandbox agent did not start: ${e.message}`, {
        details: [...e.details, ...(head === '' ? [] : [`its output began: ${head}`])],
        hint: e.hint ?? `is ${launcher} installed in the container (installLauncher) and current?`,
        cause: e,
      });
    } finally {
      attached.unref();
    }
  }

  /** The agent's pid in the container (its hello): what `ab-launch --cut-serve` signals. */
  get pid(): number {
    return this.hello.pid;
  }

  get alive(): boolean {
    return this.attached.open && !this.link.failed;
  }

  /** Processes that were in the container before the agent (pid 1, the idle process): the harness's. */
  get harnessPids(): readonly number[] {
    return [this.hello.pid, ...this.hello.harnessPids];
  }

  /** Run one request; `deadlineMs` bounds the wait for its answer (the command's own timeout plus a margin). */
  request(req: AgentRequest, deadlineMs: number): Promise<AgentResponse> {
    return this.exchange(encodeRequest(req), deadlineMs);
  }

  /** The filesystem listing under `roots` (snapshot format), listed by the agent itself. */
  async list(roots: readonly string[], deadlineMs: number): Promise<Buffer> {
    const response = await this.exchange(encodeListRequest(roots), deadlineMs);
    if (response.outcome.kind !== 'exited' || response.outcome.code !== 0) {
      throw new AuthbenchError('SANDBOX_UNAVAILABLE', 'the sandbox agent could not list the filesystem (over its size limit)');
    }
    return response.stdout;
  }

  /** Stop every background command (the episode's end) and take what they did since their command ended. */
  stopBackground(deadlineMs: number): Promise<BackgroundReport> {
    return this.exchange(encodeStopRequest(), deadlineMs, decodeBackgroundReport);
  }

  private exchange(frame: Buffer, deadlineMs: number): Promise<AgentResponse>;
  private exchange<T>(frame: Buffer, deadlineMs: number, decode: (frame: Frame) => T): Promise<T>;
  private exchange(frame: Buffer, deadlineMs: number, decode: (frame: Frame) => unknown = decodeResponse): Promise<unknown> {
    const next = this.queue.then(async () => {
      this.attached.ref();
      try {
        this.link.assertIdle();
        let sent = false;
        const reply = this.link.next(deadlineMs);
        // A failed write means the agent is gone: fail the waiter so the error surfaces once, through reply.
        await this.attached
          .write(frame)
          .then(() => {
            sent = true;
          })
          .catch((e: unknown) => this.link.fail(new AuthbenchError('SANDBOX_UNAVAILABLE', 'cannot reach the sandbox agent', { cause: e })));
        try {
          return decode(await reply);
        } catch (e) {
          // An error frame (the request was refused, nothing ran) leaves the link intact and is rethrown as is.
          if (!sent || !this.link.failed || !(e instanceof AuthbenchError)) throw e;
          // The agent was reached and then died, went silent or broke the framing: while the request ran.
          await this.attached.close().catch(() => undefined);
          throw new AuthbenchError('SANDBOX_BROKEN', e.message, { details: e.details, cause: e });
        }
      } finally {
        this.attached.unref();
      }
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  close(): Promise<void> {
    return this.attached.close();
  }
}

/** Frames from the agent's stdout, handed to one waiter at a time; failures carry the stderr tail. */
class FrameLink {
  private readonly decoder = new FrameDecoder();
  private readonly frames: Frame[] = [];
  private waiter: Waiter | undefined;
  private failure: AuthbenchError | undefined;
  private stderrTail = Buffer.alloc(0);
  /** The first bytes of stdout, for explaining an agent that never spoke the protocol. */
  stdoutHead = Buffer.alloc(0);

  get failed(): boolean {
    return this.failure !== undefined;
  }

  push(chunk: Buffer): void {
    if (this.stdoutHead.length < STDOUT_HEAD_BYTES) this.stdoutHead = Buffer.concat([this.stdoutHead, chunk]).subarray(0, STDOUT_HEAD_BYTES);
    if (this.failure !== undefined) return;
    try {
      this.frames.push(...this.decoder.push(chunk));
    } catch (e) {
      this.fail(e instanceof AuthbenchError ? e : new AuthbenchError('SANDBOX_UNAVAILABLE', String(e)));
      return;
    }
    this.deliver();
  }

  pushStderr(chunk: Buffer): void {
    this.stderrTail = Buffer.concat([this.stderrTail, chunk]).subarray(-STDERR_TAIL_BYTES);
  }

  end(exitCode: number | null): void {
    this.fail(new AuthbenchError('SANDBOX_UNAVAILABLE', `the sandbox agent exited (${exitCode === null ? 'exit code unknown' : `exit ${exitCode}`})`));
  }

  /** Between requests nothing may be pending: a stray frame would be taken for the next answer. */
  assertIdle(): void {
    if (this.frames.length > 0) this.fail(new AuthbenchError('SANDBOX_UNAVAILABLE', 'the sandbox agent sent a frame nobody asked for'));
    if (this.failure !== undefined) throw this.failure;
  }

  /** The next frame; rejects when the agent fails first or (with a limit) nothing arrives in time. */
  next(timeoutMs: number | undefined): Promise<Frame> {
    if (this.waiter !== undefined) return Promise.reject(new AuthbenchError('INTERNAL', 'sandbox agent: two requests in flight'));
    return new Promise<Frame>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const settle = (): void => {
        if (timer !== undefined) clearTimeout(timer);
        this.waiter = undefined;
      };
      this.waiter = {
        resolve: (f) => (settle(), resolve(f)),
        reject: (e) => (settle(), reject(e)),
      };
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => this.fail(new AuthbenchError('SANDBOX_UNAVAILABLE', `the sandbox agent did not answer within ${timeoutMs} ms`)), timeoutMs);
      }
      this.deliver();
    });
  }

  private deliver(): void {
    const w = this.waiter;
    if (w === undefined) return;
    const frame = this.frames.shift();
    if (frame !== undefined) w.resolve(frame);
    else if (this.failure !== undefined) w.reject(this.failure);
  }

  fail(e: AuthbenchError): void {
    if (this.failure === undefined) {
      const tail = this.stderrTail.toString('utf8').trim().split('\n').filter((l) => l !== '').slice(-5);
      this.failure = tail.length === 0 ? e : new AuthbenchError(e.code, e.message, { details: [...e.details, ...tail], cause: e });
    }
    this.deliver();
  }
}
