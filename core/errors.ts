/**
 * Every harness fault authbench raises is an AuthbenchError with a stable code.
 * Throw sites never print: the CLI edge (cli/render-error.ts) is the one place
 * that turns an error into output and an exit code.
 *
 * Exit codes: 1 = bad input or a failed check the user asked for;
 * 125 = authbench itself (or its infrastructure: Docker, the kernel) failed,
 * so the result says nothing about the task.
 */

export const ERROR_CODES = {
  // bad input: exit 1
  INVALID_TASK: 'invalid task definition',
  INVALID_SPEC: 'invalid permission_eval_spec.json',
  INVALID_POLICY: 'invalid authorization policy',
  INVALID_CONFIG: 'invalid configuration',
  INVALID_ARGUMENT: 'invalid argument',
  TASK_NOT_FOUND: 'task not found',
  PATH_ESCAPE: 'path escapes its root',
  CHECK_FAILED: 'check failed',
  GOLD_MISSING: 'no gold derived for the task yet',
  MODEL_REQUEST_FAILED: 'model request rejected',
  TOO_LARGE: 'larger than authbench reads',
  INVALID_TRAJECTORY: 'invalid ATIF trajectory',
  // infrastructure: exit 125
  DOCKER_UNREACHABLE: 'Docker daemon unreachable',
  DOCKER_API: 'Docker API error',
  IMAGE_BUILD_FAILED: 'image build failed',
  IMAGE_NOT_FOUND: 'image not found',
  BASE_IMAGE_FAILED: 'base image build failed',
  SANDBOX_UNAVAILABLE: 'sandbox enforcement unavailable',
  SANDBOX_BROKEN: 'the sandbox broke while a command ran',
  SIDECAR_FAILED: 'a compose sidecar did not become ready',
  TRACE_UNREADABLE: 'trace unreadable',
  MODEL_UNAVAILABLE: 'model provider unavailable',
  RELAY_FORWARD_FAILED: 'the model relay could not be forwarded into the container',
  CLUSTER_UNAVAILABLE: 'the cluster scheduler failed or is missing',
  TRACER_UNAVAILABLE: 'the requested tracer cannot run on this host',
  INTERNAL: 'internal error',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

const INFRA_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'DOCKER_UNREACHABLE',
  'DOCKER_API',
  'IMAGE_BUILD_FAILED',
  'IMAGE_NOT_FOUND',
  'BASE_IMAGE_FAILED',
  'SANDBOX_UNAVAILABLE',
  'SANDBOX_BROKEN',
  'SIDECAR_FAILED',
  'TRACE_UNREADABLE',
  'MODEL_UNAVAILABLE',
  'RELAY_FORWARD_FAILED',
  'CLUSTER_UNAVAILABLE',
  'TRACER_UNAVAILABLE',
  'INTERNAL',
]);

export interface ErrorOptions {
  /** The file the problem is in (repo-relative or as the user gave it). */
  file?: string;
  /** The field / entry inside that file, dotted (e.g. `metadata.authbench_eval_dataset`). */
  field?: string;
  /** Extra lines shown under the message (e.g. the last build log lines). */
  details?: readonly string[];
  /** A suggestion for the user. */
  hint?: string;
  cause?: unknown;
}

export class AuthbenchError extends Error {
  override readonly name = 'AuthbenchError';
  readonly code: ErrorCode;
  readonly file: string | undefined;
  readonly field: string | undefined;
  readonly details: readonly string[];
  readonly hint: string | undefined;

  constructor(code: ErrorCode, message: string, options: ErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.file = options.file;
    this.field = options.field;
    this.details = options.details ?? [];
    this.hint = options.hint;
  }

  /** True when the failure is authbench's or its infrastructure's, never the task's or agent's. */
  get isInfrastructure(): boolean {
    return INFRA_CODES.has(this.code);
  }

  get exitCode(): 1 | 125 {
    return this.isInfrastructure ? 125 : 1;
  }
}

export function isAuthbenchError(e: unknown): e is AuthbenchError {
  return e instanceof AuthbenchError;
}

/** One located problem found while checking input; many are collected before reporting. */
export interface Problem {
  file: string;
  field?: string;
  message: string;
  severity: 'error' | 'warning';
}

export function formatProblem(p: Problem): string {
  const where = p.field === undefined ? p.file : `${p.file}: ${p.field}`;
  return `${p.severity}: ${where}: ${p.message}`;
}
