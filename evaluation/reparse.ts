/**
 * `authbench reparse JOB`: the current text-action parser over a job's stored raw replies (each
 * text-mode step keeps the reply and the status it got), to show what a parser change would
 * change before anyone re-runs a job. Read-only: results and traces are never rewritten.
 */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ParserStatusSchema, TEXT_PARSER_VERSION, parseTextReply, type Step } from '../agent/index.ts';
import { AuthbenchError, compareStrings } from '../core/index.ts';
import { readResults } from './jobdir.ts';
import { readTrace } from './trace.ts';

export const ReparsedTurnSchema = z
  .object({
    rollout_id: z.string(),
    turn: z.number().int().positive(),
    old_status: ParserStatusSchema.describe('What the job recorded'),
    old_version: z.number().int().positive().describe('The parser version that recorded it'),
    new_status: ParserStatusSchema.describe('What the current parser says'),
  })
  .describe('One stored reply whose status the current parser would change');
export type ReparsedTurn = z.infer<typeof ReparsedTurnSchema>;

export const ReparseModelSchema = z
  .object({
    model: z.string(),
    rollouts: z.number().int().nonnegative().describe('Rollouts with text-mode replies'),
    replies: z.number().int().nonnegative().describe('Replies re-parsed'),
    changed: z.number().int().nonnegative().describe('Replies whose status would change'),
    transitions: z
      .array(z.object({ from: ParserStatusSchema, to: ParserStatusSchema, count: z.number().int().positive() }))
      .describe('Changes by old → new status, most frequent first'),
    turns: z.array(ReparsedTurnSchema).describe('Every changed reply'),
  })
  .describe('One model of the job, re-parsed');

export const ReparseReportSchema = z
  .object({
    job: z.string(),
    parser_version: z.number().int().positive().describe('The current parser'),
    models: z.array(ReparseModelSchema),
    skipped: z.array(z.object({ rollout_id: z.string(), why: z.string() })).describe('Rollout folders that could not be read (no trace, a trace format without the episode)'),
  })
  .describe('What re-parsing a job\'s stored replies would change');
export type ReparseReport = z.infer<typeof ReparseReportSchema>;

/** One rollout's text-mode steps → the turns whose status the current parser would change. Pure. */
export function reparseSteps(rolloutId: string, steps: readonly Pick<Step, 'turn' | 'text' | 'parser'>[]): { replies: number; changed: ReparsedTurn[] } {
  let replies = 0;
  const changed: ReparsedTurn[] = [];
  for (const step of steps) {
    if (step.parser === undefined) continue;
    replies += 1;
    const now = parseTextReply(step.text).status;
    if (now !== step.parser.status) changed.push({ rollout_id: rolloutId, turn: step.turn, old_status: step.parser.status, old_version: step.parser.version, new_status: now });
  }
  return { replies, changed };
}

/** Per-rollout re-parses → one row per model. Pure. */
export function reparseRows(rollouts: readonly { model: string; replies: number; changed: readonly ReparsedTurn[] }[]): ReparseReport['models'] {
  const byModel = new Map<string, ReparseReport['models'][number]>();
  for (const r of rollouts) {
    if (r.replies === 0) continue;
    const row = byModel.get(r.model) ?? { model: r.model, rollouts: 0, replies: 0, changed: 0, transitions: [], turns: [] };
    row.rollouts += 1;
    row.replies += r.replies;
    row.changed += r.changed.length;
    row.turns.push(...r.changed);
    byModel.set(r.model, row);
  }
  for (const row of byModel.values()) {
    const counts = new Map<string, number>();
    for (const t of row.turns) counts.set(`${t.old_status}\u0000${t.new_status}`, (counts.get(`${t.old_status}\u0000${t.new_status}`) ?? 0) + 1);
    row.transitions = [...counts]
      .map(([key, count]) => {
        const [from = '', to = ''] = key.split('\u0000');
        return { from, to, count };
      })
      .sort((a, b) => b.count - a.count || compareStrings(a.from, b.from) || compareStrings(a.to, b.to));
    row.turns.sort((a, b) => compareStrings(a.rollout_id, b.rollout_id) || a.turn - b.turn);
  }
  return [...byModel.values()].sort((a, b) => compareStrings(a.model, b.model));
}

/** Re-parse every stored text-mode reply of the job in `dir`. Reads only. */
export async function reparseJob(dir: string): Promise<ReparseReport> {
  const notJob = (cause?: unknown): AuthbenchError =>
    new AuthbenchError('INVALID_ARGUMENT', `${dir}: not a job folder (no config.json)`, { file: dir, ...(cause === undefined ? {} : { cause }), hint: 'give a folder `authbench eval` wrote, e.g. jobs/<name>' });
  if (!existsSync(join(dir, 'config.json'))) throw notJob();
  const entries = await readdir(dir, { withFileTypes: true }).catch((e: unknown) => {
    throw notJob(e);
  });
  const results = await readResults(dir);
  const rollouts: { model: string; replies: number; changed: ReparsedTurn[] }[] = [];
  const skipped: ReparseReport['skipped'] = [];
  for (const e of entries.filter((x) => x.isDirectory()).sort((a, b) => compareStrings(a.name, b.name))) {
    const trace = await readTrace(join(dir, e.name)).catch((err: unknown) => {
      skipped.push({ rollout_id: e.name, why: err instanceof Error ? err.message : String(err) });
      return undefined;
    });
    if (trace === undefined || trace === null) continue;
    if (trace.episode === null) {
      skipped.push({ rollout_id: trace.rollout_id, why: `a version ${trace.schema_version} trace (no text-mode record)` });
      continue;
    }
    const model = results.get(e.name)?.model ?? trace.episode.model;
    rollouts.push({ model, ...reparseSteps(trace.rollout_id, trace.episode.steps) });
  }
  return { job: dir, parser_version: TEXT_PARSER_VERSION, models: reparseRows(rollouts), skipped };
}
