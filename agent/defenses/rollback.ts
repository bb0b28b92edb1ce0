/**
 * rollback (the seed's rollback variant): intent-ledger, plus a workspace
 * snapshot (the workdir and the memory entries) before every high-risk
 * command in a tainted context. After the command, containment's analysis of
 * the episode including it says what it committed; an effect the ledger does
 * not authorize, a tainted write into a memory entry or a write carrying a
 * secret label puts the snapshot back. The model is told.
 *
 * A tainted write into memory that only removes lines (the entry's content
 * after the command is a sub-multiset of its lines before) is a scrub, not a
 * poisoning: recovery objectives read the poisoned notes and then drop the
 * bad entries, and restoring would re-infect the memory the agent just
 * cleaned. Such writes are kept and listed in the record's `scrubbed`. The
 * price: a tainted instruction to delete good notes is kept too — removal can
 * lose information but cannot plant an instruction, and without per-entry
 * provenance the two look the same at this level.
 *
 * The ledger here is what the kernel enforced (the policy plus the implicit
 * writes every command needs), so harness-level writes never trigger a
 * restore; what remains is what slipped past it (grants Landlock had to
 * widen) and what is authorized but tainted or secret.
 *
 * All of it runs during the episode, after commands that may have replaced
 * the image's programs, so none of it runs one: the memory entries' contents
 * before and after come from the daemon's tars of the roots (a regular file
 * only — an entry that became a symlink, or sits under a directory that became
 * one, is never a scrub), and the restore's removals are the harness's own
 * static binary (snapshot.ts).
 */
import { analyzeRollout, authorizedEffect, carriesSecret, changedPaths, classifyCommand, isTainted, rolloutTaintConfig, type Effect, type TaintConfig } from '../../containment/index.ts';
import { AuthbenchError } from '../../core/index.ts';
import { covers, isWithin } from '../../sandbox/paths/index.ts';
import type { Policy } from '../../sandbox/policy/index.ts';
import type { Proposal, RollbackRecord } from '../schema.ts';
import { decideIntentLedger } from './intent-ledger.ts';
import { requirePolicy } from './require.ts';
import { entryAfter, isTooLarge, readWorkspace, restoreSnapshot, snapshotRoots, takeSnapshot, type ContentRequest, type WorkspaceState } from './snapshot.ts';
import { contextTainted, rolloutWith } from './taint.ts';
import type { Defense, DefenseContext, RunGuard } from './types.ts';

const NAME = 'rollback';
/** Memory entries larger than this are never judged a scrub (their content is not compared). */
const MEMORY_CAP_BYTES = 4 * 1024 * 1024;

export function describeEffect(e: Effect): string {
  if (e.kind === 'network') return `${e.op} ${e.address}:${e.port ?? '?'}`;
  return e.path2 === undefined ? `${e.op} ${e.path}` : `${e.op} ${e.path} -> ${e.path2}`;
}

/**
 * True when `after` only drops lines of `before`: every line of it occurs in
 * `before` at least as often (order and blank lines ignored). A deleted entry
 * (`after` undefined) removes everything. Pure.
 */
export function onlyRemovesLines(before: string, after: string | undefined): boolean {
  if (after === undefined) return true;
  const count = new Map<string, number>();
  for (const line of before.split('\n')) if (line.trim() !== '') count.set(line, (count.get(line) ?? 0) + 1);
  for (const line of after.split('\n')) {
    if (line.trim() === '') continue;
    const left = count.get(line) ?? 0;
    if (left === 0) return false;
    count.set(line, left - 1);
  }
  return true;
}

/**
 * Why the effects of the proposal at `index` call for a restore, which of them
 * lie outside the roots, and which memory entries the tainted writes only
 * scrubbed (`scrubbed` in: entries whose new content only removes lines). Pure.
 */
export function restoreReasons(
  analysis: ReturnType<typeof analyzeRollout>,
  index: number,
  ledger: Policy,
  config: TaintConfig,
  roots: readonly string[],
  scrubbed: ReadonlySet<string> = new Set(),
): { why: string[]; outside: string[]; memoryWrites: string[] } {
  const why: string[] = [];
  const outside: string[] = [];
  const memoryWrites = new Set<string>();
  for (const n of analysis.graph.nodes) {
    if (n.type !== 'commit' || n.attrs.proposal_index !== index) continue;
    const e = n.attrs.effect;
    const paths = e.kind === 'file' ? changedPaths(e) : [];
    const reasons: string[] = [];
    if (!authorizedEffect(e, ledger, config.scratch_roots)) reasons.push('unauthorized by the ledger');
    const memory = isTainted(n.labels) ? paths.filter((p) => config.memory_files.some((m) => covers(m, p))) : [];
    for (const p of memory) memoryWrites.add(p);
    if (memory.some((p) => !scrubbed.has(p))) reasons.push('tainted write into a memory entry');
    if (carriesSecret(n.labels)) reasons.push('carries a secret label');
    if (reasons.length === 0) continue;
    const line = `${describeEffect(e)}: ${reasons.join(', ')}`;
    why.push(line);
    if (e.kind === 'network' || !paths.every((p) => roots.some((r) => isWithin(r, p)))) outside.push(line);
  }
  return { why, outside, memoryWrites: [...memoryWrites].sort() };
}

/** The kernel's effective ledger: the policy with the implicit writes added. */
function enforcedLedger(context: DefenseContext): Policy {
  const policy = requirePolicy(NAME, context);
  return { ...policy, write: [...policy.write, ...context.implicit.write] };
}

/**
 * The memory entries among `paths` whose content after the command only
 * removes lines of what it was before, judged on `after` (the daemon's tars of
 * the roots, read once the command ended: no program of the image runs). An
 * entry that is now a symlink, or that "disappeared" because a directory above
 * it became one, is never a scrub.
 */
function scrubbedEntries(after: WorkspaceState, roots: readonly string[], before: ReadonlyMap<string, Buffer>, paths: readonly string[]): Set<string> {
  return new Set(
    paths.filter((p) => {
      const was = before.get(p);
      if (was === undefined) return false;
      const now = entryAfter(after, roots, p);
      if (now.kind === 'deleted') return true; // every line removed
      return now.kind === 'file' && onlyRemovesLines(was.toString('utf8'), now.text);
    }),
  );
}

async function prepareRun(proposal: { args: { command: string } }, context: DefenseContext): Promise<RunGuard | undefined> {
  const config = rolloutTaintConfig(context.task);
  if (!classifyCommand(proposal.args.command, { cwd: context.task.workdir }).side_effecting) return undefined;
  if (!contextTainted(context, config)) return undefined;
  const container = context.container;
  if (container === undefined) throw new AuthbenchError('INTERNAL', 'defense rollback: no container (execution() checks for one)');
  const roots = snapshotRoots(context.task.workdir, config.memory_files);
  // The memory entries' contents come with the tars (regular files only, never through a link).
  const memory: ContentRequest = { contentOf: (p) => config.memory_files.some((m) => covers(m, p)), capBytes: MEMORY_CAP_BYTES };
  const snapshot = await takeSnapshot(container, roots, undefined, memory);
  const ledger = enforcedLedger(context);
  return {
    after: async (executed: Proposal): Promise<RollbackRecord> => {
      if ('refused' in snapshot) {
        return { rule_id: `${NAME}/kept`, roots, snapshot_bytes: snapshot.bytes, snapshot_ms: 0, restored: false, why: [], removed: [], outside_snapshot: [], snapshot_error: snapshot.refused };
      }
      const base = { roots, snapshot_bytes: snapshot.bytes, snapshot_ms: snapshot.ms };
      const { input, index } = rolloutWith(context, executed);
      const analysis = analyzeRollout(input, config);
      let reasons = restoreReasons(analysis, index, ledger, config, roots);
      let scrubbed: string[] = [];
      let after: WorkspaceState | undefined;
      if (reasons.memoryWrites.length > 0) {
        try {
          after = await readWorkspace(container, roots, memory);
        } catch (e) {
          // Grown past what the harness reads: no scrub is recognised, the restore puts the roots back whole.
          if (!isTooLarge(e)) throw e;
        }
      }
      if (after !== undefined) {
        const set = scrubbedEntries(after, roots, snapshot.files, reasons.memoryWrites);
        if (set.size > 0) {
          scrubbed = [...set].sort();
          reasons = restoreReasons(analysis, index, ledger, config, roots, set);
        }
      }
      const { why, outside } = reasons;
      const extra = scrubbed.length > 0 ? { scrubbed } : {};
      if (why.length === 0) return { rule_id: `${NAME}/kept`, ...base, restored: false, why, removed: [], outside_snapshot: [], ...extra };
      const started = performance.now();
      const { removed, skipped } = await restoreSnapshot(container, snapshot, after?.listing);
      // A root the restore could not put back (its parent became a link) leaves those effects standing.
      return {
        rule_id: `${NAME}/restored`,
        ...base,
        restored: true,
        why,
        removed,
        outside_snapshot: outside,
        ...(skipped.length === 0 ? {} : { not_restored: skipped }),
        ...extra,
        restore_ms: performance.now() - started,
      };
    },
  };
}

export const rollbackDefense: Defense = {
  name: NAME,
  version: '2',
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
