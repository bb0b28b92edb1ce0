/**
 * How one sandboxed command reaches the container. Both transports do the
 * same thing — write the command's files, run its argv (already wrapped in
 * strace / ab-launch by the session), read files back — and differ only in
 * cost: the agent does it in one round trip over an open stream, the exec
 * path in one Docker API call per step.
 */
import { posix } from 'node:path';
import { DEFAULT_OUTPUT_CAP_BYTES, type Container, type ExecResult } from '../../docker/index.ts';
import type { AgentResponse } from '../launcher/index.ts';
import type { AgentClient } from './agent-client.ts';

export type TransportKind = 'agent' | 'exec';

export interface CommandRequest {
  argv: readonly string[];
  workdir: string;
  env?: Readonly<Record<string, string>>;
  stdin?: string;
  timeoutMs?: number;
  outputCapBytes?: number;
  /** Files written into `dir` before the command runs: name → content. */
  put?: { dir: string; files: Readonly<Record<string, string>> };
  /** Container paths read back after the command; undefined where there is no such file. */
  collect: readonly string[];
}

export interface CommandOutcome {
  exec: ExecResult;
  files: (Buffer | undefined)[];
  /** What the command wrote in total, including what the cap dropped (known on the agent path only). */
  outputBytes?: { stdout: number; stderr: number };
}

export interface Transport {
  readonly kind: TransportKind;
  /** False once the transport can no longer carry commands (the agent died). */
  readonly usable: boolean;
  run(request: CommandRequest): Promise<CommandOutcome>;
  close(): Promise<void>;
}

/** Several Docker API calls per command: putArchive, exec, one getArchive per file. */
export class ExecTransport implements Transport {
  readonly kind = 'exec';
  readonly usable = true;
  private readonly container: Container;

  constructor(container: Container) {
    this.container = container;
  }

  async run(request: CommandRequest): Promise<CommandOutcome> {
    if (request.put !== undefined) await this.container.putFiles(request.put.dir, request.put.files);
    const exec = await this.container.exec({
      cmd: request.argv,
      workdir: request.workdir,
      ...(request.env === undefined ? {} : { env: request.env }),
      ...(request.stdin === undefined ? {} : { stdin: request.stdin }),
      ...(request.timeoutMs === undefined ? {} : { timeoutMs: request.timeoutMs }),
      ...(request.outputCapBytes === undefined ? {} : { outputCapBytes: request.outputCapBytes }),
    });
    const files: (Buffer | undefined)[] = [];
    for (const path of request.collect) files.push(await this.container.readFile(path));
    return { exec, files };
  }

  async close(): Promise<void> {}
}

/** One request frame, one response frame. */
export class AgentTransport implements Transport {
  readonly kind = 'agent';
  private readonly client: AgentClient;

  constructor(client: AgentClient) {
    this.client = client;
  }

  get usable(): boolean {
    return this.client.alive;
  }

  async run(request: CommandRequest): Promise<CommandOutcome> {
    const put = request.put;
    const response = await this.client.request({
      argv: request.argv,
      cwd: request.workdir,
      outputCapBytes: request.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES,
      collect: request.collect,
      ...(put === undefined ? {} : { puts: Object.entries(put.files).map(([name, content]) => ({ path: posix.join(put.dir, name), content })) }),
      ...(request.env === undefined ? {} : { env: request.env }),
      ...(request.stdin === undefined ? {} : { stdin: request.stdin }),
      ...(request.timeoutMs === undefined ? {} : { timeoutMs: request.timeoutMs }),
    });
    return {
      exec: execResultOf(response),
      files: response.files.map((f) => (f.present ? f.content : undefined)),
      outputBytes: { stdout: response.stdoutBytes, stderr: response.stderrBytes },
    };
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

/**
 * The agent's answer in the exec path's shape. A signal death reads as
 * 128 + signal, as Docker reports it; a timeout has no exit code.
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
