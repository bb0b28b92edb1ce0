/**
 * rollback (the seed's rollback variant): intent-ledger, plus a workspace
 * snapshot (the workdir and the memory entries) before every high-risk
 * command in a tainted context. After the command, containment's analysis of
 * the episode including it says what it committed; an effect the ledger does
 * not authorize, a tainted write into a memory entry or a write carrying a
 * secret label puts the snapshot back. The model is told.
 *
 * The ledger here is what the kernel enforced (the policy plus the implicit
 * writes every command needs), so harness-level writes never trigger a
 * restore; what remains is what slipped past it (grants Landlock had to
 * widen) and what is authorized but tainted or secret.
 */
import { analyzeRollout, authorizedEffect, carriesSecret, changedPaths, classifyCommand, isTainted, type Effect, type TaintConfig } from '../../containment/index.ts';
import { AuthbenchError } from '../../core/index.ts';
import { covers, isWithin } from '../../sandbox/paths/index.ts';
import type { Policy } from '../../sandbox/policy/index.ts';
import type { Proposal, RollbackRecord } from '../schema.ts';
import { decideIntentLedger } from './intent-ledger.ts';
import { requirePolicy } from './require.ts';
import { restoreSnapshot, snapshotRoots, takeSnapshot } from './snapshot.ts';
import { contextTainted, defenseTaintConfig, rolloutWith } from './taint.ts';
import type { Defense, DefenseContext, RunGuard } from './types.ts';

const NAME = 'rollback';

export function describeEffect(e: Effect): string {
  if (e.kind === 'network') return `${e.op} ${e.address}:${e.port ?? '?'}`;
  return e.path2 === undefined ? `${e.op} ${e.path}` : `${e.op} ${e.path} -> ${e.path2}`;
}

/** Why the effects of the proposal at `index` call for a restore, and which of them lie outside the roots. Pure. */
export function restoreReasons(
  analysis: ReturnType<typeof analyzeRollout>,
  index: number,
  ledger: Policy,
  config: TaintConfig,
  roots: readonly string[],
): { why: string[]; outside: string[] } {
  const why: string[] = [];
  const outside: string[] = [];
  for (const n of analysis.graph.nodes) {
    if (n.type !== 'commit' || n.attrs.proposal_index !== index) continue;
    const e = n.attrs.effect;
    const paths = e.kind === 'file' ? changedPaths(e) : [];
    const reasons: string[] = [];
    if (!authorizedEffect(e, ledger, config.scratch_roots)) reasons.push('unauthorized by the ledger');
    if (isTainted(n.labels) && paths.some((p) => config.memory_files.some((m) => covers(m, p)))) reasons.push('tainted write into a memory entry');
    if (carriesSecret(n.labels)) reasons.push('carries a secret label');
    if (reasons.length === 0) continue;
    const line = `${describeEffect(e)}: ${reasons.join(', ')}`;
    why.push(line);
    if (e.kind === 'network' || !paths.every((p) => roots.some((r) => isWithin(r, p)))) outside.push(line);
  }
  return { why, outside };
}

/** The kernel's effective ledger: the policy with the implicit writes added. */
function enforcedLedger(context: DefenseContext): Policy {
  const policy = requirePolicy(NAME, context);
  return { ...policy, write: [...policy.write, ...context.implicit.write] };
}

async function prepareRun(proposal: { args: { command: string } }, context: DefenseContext): Promise<RunGuard | undefined> {
  const config = defenseTaintConfig(context.task);
  if (!classifyCommand(proposal.args.command, { cwd: context.task.workdir }).side_effecting) return undefined;
  if (!contextTainted(context, config)) return undefined;
  const container = context.container;
  if (container === undefined) throw new AuthbenchError('INTERNAL', 'defense rollback: no container (execution() checks for one)');
  const roots = snapshotRoots(context.task.workdir, config.memory_files);
  const snapshot = await takeSnapshot(container, roots);
  const ledger = enforcedLedger(context);
  return {
    after: async (executed: Proposal): Promise<RollbackRecord> => {
      if ('refused' in snapshot) {
        return { rule_id: `${NAME}/kept`, roots, snapshot_bytes: snapshot.bytes, snapshot_ms: 0, restored: false, why: [], removed: [], outside_snapshot: [], snapshot_error: snapshot.refused };
      }
      const base = { roots, snapshot_bytes: snapshot.bytes, snapshot_ms: snapshot.ms };
      const { input, index } = rolloutWith(context, executed);
      const { why, outside } = restoreReasons(analyzeRollout(input, config), index, ledger, config, roots);
      if (why.length === 0) return { rule_id: `${NAME}/kept`, ...base, restored: false, why, removed: [], outside_snapshot: [] };
      const started = performance.now();
      const removed = await restoreSnapshot(container, snapshot);
      return { rule_id: `${NAME}/restored`, ...base, restored: true, why, removed, outside_snapshot: outside, restore_ms: performance.now() - started };
    },
  };
}

export const rollbackDefense: Defense = {
  name: NAME,
  version: '1',
  guidance: () => undefined,
  execution: (ctx) => {
    if (ctx.container?.archive === undefined || ctx.container.extractArchive === undefined) {
      throw new AuthbenchError('INVALID_ARGUMENT', 'defense rollback needs the task container, with archive access, to snapshot the workspace');
    }
    return { kind: 'enforce', policy: requirePolicy(NAME, ctx), implicit: ctx.implicit };
  },
  decide: (proposal, ctx) => decideIntentLedger(proposal, ctx, NAME),
  prepareRun,
};
