/**
 * The exploration side of policy writing: the read-only policy the kernel
 * enforces while the model looks around, a model wrapper that swaps the
 * execution agent's prompts for the policy writer's, and the count of writes
 * the kernel refused.
 */
import type { AgentModel, Episode } from '../agent/index.ts';
import type { CompleteOptions, ModelRequest, ModelResponse } from '../models/index.ts';
import type { Policy } from '../sandbox/policy/index.ts';
import { isWriteOp } from '../sandbox/trace/index.ts';

/** Read and run anything, write nothing (beyond the task's runtime implicit set). */
export function readOnlyPolicy(): Policy {
  return { read: ['/**'], write: [], execute: ['/**'] };
}

/**
 * runEpisode builds the execution agent's prompt (system + the instruction as
 * first message); the policy writer needs its own. Rewriting the request at
 * the model boundary reuses the loop, tool and enforcement unchanged.
 */
export function withPrompts(inner: AgentModel, system: string, firstUser: string): AgentModel {
  return {
    ref: inner.ref,
    complete(request: ModelRequest, options?: CompleteOptions): Promise<ModelResponse> {
      const [first, ...rest] = request.messages;
      const messages = first?.role === 'user' ? [{ role: 'user' as const, content: firstUser }, ...rest] : request.messages;
      return inner.complete({ ...request, system, messages }, options);
    },
  };
}

/** Denied file operations that would have changed the filesystem: the model tried to write while exploring. */
export function countWriteAttempts(episode: Pick<Episode, 'steps'>): number {
  let n = 0;
  for (const step of episode.steps) {
    for (const p of step.proposals) {
      for (const e of p.events) if (e.kind === 'file' && e.denied && isWriteOp(e.op)) n++;
    }
  }
  return n;
}
