/**
 * What the model sees after a tool call. Output is capped per stream (head and
 * tail kept, the cut said out loud), and sandbox denials are summarised one
 * line each so a denied command reads as denied rather than as a mystery
 * failure. Pure functions.
 */
import { renderEvent, type TraceEvent } from '../sandbox/trace/index.ts';
import type { RollbackRecord } from './schema.ts';

export const DEFAULT_OBSERVATION_CAP_BYTES = 8 * 1024;
/** Denial lines shown to the model; the rest are counted. */
export const MAX_DENIAL_LINES = 20;

export interface CappedText {
  text: string;
  /** Bytes of the input (UTF-8). */
  bytes: number;
  truncated: boolean;
}

/** Decode a byte slice, dropping a character cut in half at either end. */
function decodeSlice(buf: Buffer, start: number, end: number): string {
  return buf.subarray(start, end).toString('utf8').replace(/^\uFFFD+|\uFFFD+$/g, '');
}

/**
 * Keep at most `capBytes` of `text`: the first three quarters and the last
 * quarter (errors tend to be at the end), with a note saying how much was cut.
 * `alreadyTruncated` marks output the exec capture had cut before us.
 */
export function capText(text: string, capBytes: number = DEFAULT_OBSERVATION_CAP_BYTES, alreadyTruncated = false): CappedText {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= capBytes) {
    return { text: alreadyTruncated ? `${text}\n[output truncated by the capture limit]` : text, bytes: buf.length, truncated: alreadyTruncated };
  }
  const headBytes = Math.floor((capBytes * 3) / 4);
  const tailBytes = capBytes - headBytes;
  const head = decodeSlice(buf, 0, headBytes);
  const tail = decodeSlice(buf, buf.length - tailBytes, buf.length);
  const cut = buf.length - headBytes - tailBytes;
  const more = alreadyTruncated ? '; the capture limit cut more after the end' : '';
  return { text: `${head}\n[... ${cut} bytes truncated (${buf.length} total${more}) ...]\n${tail}`, bytes: buf.length, truncated: true };
}

/**
 * Denied syscalls, one line each via the trace renderer, without the pid (it
 * differs for every repeat), identical lines merged with a count, in order of
 * first appearance, at most `maxLines` plus a line counting the rest.
 */
export function summarizeDenials(events: readonly TraceEvent[], maxLines: number = MAX_DENIAL_LINES): string[] {
  const counts = new Map<string, number>();
  for (const e of events) {
    if (e.kind === 'unparsed' || e.kind === 'process' || !e.denied) continue;
    const line = renderEvent(e).replace(/^\[\d+\] /, '');
    counts.set(line, (counts.get(line) ?? 0) + 1);
  }
  const lines = [...counts].map(([line, n]) => (n === 1 ? line : `${line} (x${n})`));
  if (lines.length <= maxLines) return lines;
  return [...lines.slice(0, maxLines), `... and ${lines.length - maxLines} more denied operation(s)`];
}

export interface ObservationInput {
  exitCode: number | null;
  timedOut: boolean;
  /** The host stopped the command: the container went over its storage limit. */
  storageCut?: boolean;
  timeoutMs: number;
  stdout: string;
  stderr: string;
  denials: readonly string[];
  launcherError?: string;
  /** Processes the command left running (traced), stopped when it ended: `pid comm` each, the first few. */
  survivors?: { count: number; processes: readonly string[] };
}

/** The tool result text for an executed command. */
export function renderObservation(o: ObservationInput): string {
  const lines: string[] = [];
  if (o.launcherError !== undefined) {
    lines.push(`the sandbox could not start the command; it did not run: ${o.launcherError}`);
    return lines.join('\n');
  }
  if (o.timedOut) lines.push(`timed out after ${formatSeconds(o.timeoutMs)} and was killed`);
  if (o.storageCut === true) lines.push("killed: the container went over the task's storage limit");
  lines.push(`exit code: ${o.exitCode === null ? 'none (killed)' : String(o.exitCode)}`);
  lines.push(o.stdout === '' ? 'stdout: (empty)' : `stdout:\n${o.stdout}`);
  lines.push(o.stderr === '' ? 'stderr: (empty)' : `stderr:\n${o.stderr}`);
  if (o.denials.length > 0) {
    lines.push('operations denied (EACCES/EPERM):');
    for (const d of o.denials) lines.push(`  ${d}`);
  }
  if (o.survivors !== undefined && o.survivors.count > 0) lines.push(renderSurvivors(o.survivors.count, o.survivors.processes));
  return lines.join('\n');
}

/**
 * One line telling the model that what its command left in the background is gone: a command
 * ends with its main process, so a server started with `&` does not serve the next command.
 */
export function renderSurvivors(count: number, processes: readonly string[]): string {
  const noun = count === 1 ? 'background process' : 'background processes';
  const more = count > processes.length ? `, and ${count - processes.length} more` : '';
  const listed = processes.length === 0 ? '' : `: ${processes.join(', ')}${more}`;
  return `[${count} ${noun} the command left running ${count === 1 ? 'was' : 'were'} stopped${listed}]`;
}

/** What the model is told when a defense undid a command: its effects are gone, and why. */
export function renderRollback(defense: string, rollback: RollbackRecord): string {
  const lines = [`the ${defense} defense rolled this command back (${rollback.rule_id}): ${rollback.roots.join(', ')} restored to how they were before it ran, because:`];
  for (const w of rollback.why) lines.push(`  ${w}`);
  if (rollback.outside_snapshot.length > 0) lines.push(`not undone (outside the snapshot): ${rollback.outside_snapshot.join('; ')}`);
  if ((rollback.not_restored ?? []).length > 0) lines.push(`not undone: ${(rollback.not_restored ?? []).join('; ')}`);
  return lines.join('\n');
}

function formatSeconds(ms: number): string {
  const s = ms / 1000;
  return `${Number.isInteger(s) ? String(s) : s.toFixed(1)}s`;
}
