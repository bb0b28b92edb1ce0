/**
 * Actions written as text (`--tool-format text`): models served without native tool calling
 * write their shell calls into the reply, and a harness that reads such a reply as a final answer
 * silently turns an attack into a "benign" ending. This parser reads one reply into an action, a
 * final answer or `invalid`, with a status saying how much help it needed. Pure.
 *
 * The canonical format the prompt teaches (agent/prompt.ts) is the whole reply as one JSON object:
 * `{"tool": "shell", "command": "…", "timeout_sec": 60}` for an action, `{"final": "…"}` to finish.
 * Status `strict` is that, or `Final Answer: …` at the start of the reply. Everything else accepted
 * is `repaired:<kind>`, the kind being the first repair applied (all are listed in `repairs`):
 * - extraction: `fenced` (a ```json block), `prefixed` (`Action: {…}`), `react` (`Action: NAME` then
 *   `Action Input: …`), `prose` (one JSON object among other text, `<tool_call>` tags included),
 *   `fenced-shell` (one ```bash / ```sh block and no JSON action: the model meant to run it — it is
 *   told the format in every invalid observation, but refusing the commonest text-action form would
 *   only measure formatting), `bare-final` (plain text with nothing action-like: a final answer);
 * - syntax: `json-syntax` (single quotes, trailing commas, comments, unquoted keys: jsonrepair);
 * - naming: `tool-alias` (`bash`, `sh`, `terminal`, `execute`, `run_command`… → `shell`),
 *   `implied-tool` (a command with no tool named), `arg-alias` (`cmd`, `script`, `input`, `code` → `command`), `nested-args` (`{"name", "arguments"}`,
 *   `{"action", "action_input"}`), `extra-keys` (keys beside the action's, dropped), `final-alias`
 *   (`final_answer`, `{"action": "Final Answer", …}`), `duplicate-action` (the same action twice).
 *
 * Never repaired into an action: truncated JSON (an object whose braces or string never close:
 * the command may have been cut mid-word, `rm -rf /tmp/x` into `rm -rf /`), two different actions
 * in one reply (running the first would drop the model's intent without telling it; the format is
 * one action per reply), an action beside a final answer, an unknown tool, a missing command.
 * Those are `invalid:<why>` (INVALID_WHYS), and so is anything action-like that does not parse —
 * an `Action:` line, a brace followed by a tool or command key: never a final answer.
 */
import { jsonrepair } from 'jsonrepair';
import { z } from 'zod';
import { MAX_COMMAND_TIMEOUT_SEC, SHELL_TOOL } from './tools.ts';

/** Bumped when a change can change a status; recorded per turn, so `authbench reparse` can tell. */
export const TEXT_PARSER_VERSION = 1 as const;

export const REPAIR_KINDS = [
  'fenced',
  'prefixed',
  'react',
  'prose',
  'fenced-shell',
  'bare-final',
  'json-syntax',
  'tool-alias',
  'implied-tool',
  'arg-alias',
  'nested-args',
  'extra-keys',
  'final-alias',
  'duplicate-action',
] as const;
export type RepairKind = (typeof REPAIR_KINDS)[number];

export const INVALID_WHYS = [
  'unknown-tool',
  'missing-command',
  'bad-arguments',
  'multiple-actions',
  'action-and-final',
  'truncated',
  'unparseable-action',
  'unrecognized-object',
] as const;
export type InvalidWhy = (typeof INVALID_WHYS)[number];

export const ParserStatusSchema = z
  .string()
  .regex(new RegExp(`^(strict|repaired:(${REPAIR_KINDS.join('|')})|invalid:(${INVALID_WHYS.join('|')}))$`), 'strict, repaired:<kind> or invalid:<why>')
  .describe('strict: the taught format; repaired:<kind>: accepted after the first repair named; invalid:<why>: never executed, never a final answer');
export type ParserStatus = z.infer<typeof ParserStatusSchema>;

export const TextActionSchema = z
  .strictObject({
    tool: z.literal(SHELL_TOOL),
    command: z.string().min(1).describe('The bash command line'),
    timeout_sec: z.number().positive().max(MAX_COMMAND_TIMEOUT_SEC).optional().describe('Wall-clock limit the model asked for'),
    confirmation: z.unknown().optional().describe('A structured confirmation, passed on to the defense that asks for one'),
  })
  .describe('One shell action read out of a reply');
export type TextAction = z.infer<typeof TextActionSchema>;

const repairs = z.array(z.enum(REPAIR_KINDS)).describe('Every repair applied, in order; the first names the status');
export const ParsedReplySchema = z
  .discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('action'), status: ParserStatusSchema, repairs, action: TextActionSchema }),
    z.strictObject({ kind: z.literal('final'), status: ParserStatusSchema, repairs, text: z.string().describe('The final answer') }),
    z.strictObject({
      kind: z.literal('invalid'),
      status: ParserStatusSchema,
      repairs,
      reason: z.string().describe('Why, for the model and a human'),
      tool: z.string().optional().describe('The tool the reply named, as written'),
      args: z.unknown().optional().describe('What the reply gave as arguments, as read'),
    }),
  ])
  .describe('How one model reply was read in text mode');
export type ParsedReply = z.infer<typeof ParsedReplySchema>;

export const SHELL_TOOL_ALIASES: readonly string[] = ['bash', 'sh', 'shell', 'terminal', 'execute', 'execute_bash', 'execute_command', 'exec', 'run', 'run_command', 'run_shell', 'run_shell_command', 'shell_command', 'bash_command', 'command', 'cmd', 'cli'];
const FINAL_ALIASES: readonly string[] = ['final', 'final_answer', 'finalanswer', 'finish', 'answer', 'done'];
const TOOL_KEYS = ['tool', 'name', 'action', 'tool_name', 'function'] as const;
const ARG_CONTAINERS = ['arguments', 'args', 'parameters', 'params', 'action_input', 'tool_input', 'input'] as const;
const COMMAND_ALIASES = ['cmd', 'script', 'input', 'code', 'bash', 'shell', 'command_line'] as const;
const SHELL_FENCE_LANGS = new Set(['bash', 'sh', 'shell', 'console', 'zsh', 'terminal']);

const FENCE = /```([^\n`]*)\n([\s\S]*?)```/g;
const ACTION_LIKE_KEY = /["']?\b(tool|tool_name|command|cmd|action|function|arguments|action_input)\b["']?\s*:/i;
const FINAL_MARKER = /^[ \t]*(?:\*\*)?final answer(?:\*\*)?\s*:\s*/im;
const ACTION_LINE = /^[ \t]*(?:\*\*)?action(?:\*\*)?\s*:[ \t]*(.*)$/im;
const ACTION_INPUT = /^[ \t]*(?:\*\*)?action input(?:\*\*)?\s*:[ \t]*/im;

type Source = 'strict' | 'fenced' | 'prefixed' | 'react' | 'prose';

/** What one candidate in the reply turned out to be. */
type Reading =
  | { kind: 'action'; action: TextAction; repairs: RepairKind[] }
  | { kind: 'final'; text: string; repairs: RepairKind[] }
  | { kind: 'invalid'; why: InvalidWhy; reason: string; repairs: RepairKind[]; tool?: string; args?: unknown }
  | { kind: 'other' };

const norm = (s: string): string => s.trim().toLowerCase().replace(/[\s-]+/g, '_');
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Read one model reply. Pure. */
export function parseTextReply(reply: string): ParsedReply {
  const text = reply.trim();
  if (text === '') return { kind: 'final', status: 'repaired:bare-final', repairs: ['bare-final'], text: '' };

  const whole = parseObject(text);
  if (whole !== undefined) {
    const read = readObject(whole.value, whole.repaired ? ['json-syntax'] : []);
    if (read.kind === 'other') return invalid('unrecognized-object', 'the reply is a JSON object that is neither an action nor a final answer', []);
    return settle([read]);
  }

  const readings: Reading[] = [];
  // ReAct first: its input (fenced or JSON) is its own; what follows `Action:` is not scanned again.
  const react = readReact(text);
  if (react !== undefined) readings.push(react.reading);
  const head = react === undefined ? text : text.slice(0, react.start);
  // Then fences; their bodies are blanked so the scans below do not see them twice.
  let rest = head;
  const shellBlocks: string[] = [];
  for (const m of head.matchAll(FENCE)) {
    const lang = norm(m[1] ?? '');
    const body = (m[2] ?? '').trim();
    rest = rest.slice(0, m.index) + ' '.repeat(m[0].length) + rest.slice(m.index + m[0].length);
    const value = parseObject(body);
    if (value !== undefined) readings.push(fromSource(value, 'fenced'));
    else if (SHELL_FENCE_LANGS.has(lang) && body !== '') shellBlocks.push(body);
    else if (body.startsWith('{') && ACTION_LIKE_KEY.test(body)) readings.push(unparseable(body));
  }

  const { spans, unclosed } = objectSpans(rest);
  for (const span of spans) {
    const value = parseObject(span.text);
    if (value === undefined) {
      if (ACTION_LIKE_KEY.test(span.text)) readings.push(unparseable(span.text));
      continue;
    }
    const lineStart = rest.lastIndexOf('\n', span.start - 1) + 1;
    const prefixed = /^\s*(?:\*\*)?action(?:\*\*)?\s*:\s*$/i.test(rest.slice(lineStart, span.start));
    readings.push(fromSource(value, prefixed ? 'prefixed' : 'prose'));
  }
  if (unclosed !== undefined && ACTION_LIKE_KEY.test(unclosed)) {
    readings.push({ kind: 'invalid', why: 'truncated', reason: 'a JSON action that never closes (cut off?): not run, the command may be incomplete', repairs: [] });
  }

  const marker = FINAL_MARKER.exec(rest);
  if (marker !== undefined && marker !== null) {
    const after = text.slice(marker.index + marker[0].length).trim();
    readings.push({ kind: 'final', text: after, repairs: text.slice(0, marker.index).trim() === '' ? [] : ['prose'] });
  } else if (readings.every((r) => r.kind === 'other')) {
    if (ACTION_LINE.test(rest)) return invalid('unparseable-action', 'an `Action:` line that could not be read as an action', []);
    if (shellBlocks.length > 1) return invalid('multiple-actions', `${shellBlocks.length} shell blocks in one reply; send one action per reply`, []);
    const [block] = shellBlocks;
    if (block !== undefined) return accepted({ action: { tool: SHELL_TOOL, command: block }, repairs: ['fenced-shell'] });
    return { kind: 'final', status: 'repaired:bare-final', repairs: ['bare-final'], text };
  }
  return settle(readings);
}

/** One reply's readings → its verdict: one action, or one final answer, or invalid. */
function settle(all: readonly Reading[]): ParsedReply {
  const readings = all.filter((r) => r.kind !== 'other');
  const actions = readings.filter((r) => r.kind !== 'final');
  const finals = readings.filter((r) => r.kind === 'final');
  const distinct = new Map<string, Reading>();
  for (const a of actions) {
    const key = a.kind === 'action' ? JSON.stringify(a.action) : `invalid:${distinct.size}`;
    if (!distinct.has(key)) distinct.set(key, a);
  }
  if (distinct.size > 1) return invalid('multiple-actions', `${distinct.size} different actions in one reply; send one action per reply`, []);
  const [action] = distinct.values();
  if (action !== undefined && finals.length > 0) return invalid('action-and-final', 'an action and a final answer in one reply; send either', []);
  if (action !== undefined) {
    if (action.kind === 'invalid') return { kind: 'invalid', status: `invalid:${action.why}`, repairs: action.repairs, reason: action.reason, ...pick(action) };
    if (action.kind === 'action') return accepted(actions.length > 1 ? { ...action, repairs: [...action.repairs, 'duplicate-action'] } : action);
  }
  const [final] = finals;
  if (final?.kind === 'final') return { kind: 'final', status: statusOf(final.repairs), repairs: final.repairs, text: final.text };
  return invalid('unrecognized-object', 'nothing in the reply is an action or a final answer', []);
}

function pick(r: { tool?: string; args?: unknown }): { tool?: string; args?: unknown } {
  return { ...(r.tool === undefined ? {} : { tool: r.tool }), ...(r.args === undefined ? {} : { args: r.args }) };
}

function accepted(r: { action: TextAction; repairs: RepairKind[] }): ParsedReply {
  return { kind: 'action', status: statusOf(r.repairs), repairs: r.repairs, action: r.action };
}

function statusOf(repairs: readonly RepairKind[]): ParserStatus {
  const [first] = repairs;
  return first === undefined ? 'strict' : `repaired:${first}`;
}

function invalid(why: InvalidWhy, reason: string, repairs: RepairKind[]): ParsedReply {
  return { kind: 'invalid', status: `invalid:${why}`, repairs, reason };
}

function unparseable(text: string): Reading {
  return { kind: 'invalid', why: 'unparseable-action', reason: `an action-like object that is not JSON even after repair: ${text.slice(0, 120)}`, repairs: [] };
}

function fromSource(value: { value: Record<string, unknown>; repaired: boolean }, source: Source): Reading {
  const repairs: RepairKind[] = source === 'strict' ? [] : [source];
  if (value.repaired) repairs.push('json-syntax');
  return readObject(value.value, repairs);
}

/** A JSON object as written, else after jsonrepair (quotes, commas, comments); never a truncated one. */
function parseObject(text: string): { value: Record<string, unknown>; repaired: boolean } | undefined {
  const t = text.trim();
  if (!t.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(t);
    return isRecord(value) ? { value, repaired: false } : undefined;
  } catch {
    // repaired below
  }
  if (!t.endsWith('}') || !closes(t)) return undefined;
  try {
    const value: unknown = JSON.parse(jsonrepair(t));
    return isRecord(value) ? { value, repaired: true } : undefined;
  } catch {
    return undefined;
  }
}

/** The text's first object and its strings all close (no truncation for jsonrepair to paper over). */
function closes(text: string): boolean {
  const { spans, unclosed } = objectSpans(text);
  return unclosed === undefined && spans.length === 1 && spans[0]?.text.length === text.length;
}

/** Top-level `{…}` spans, braces inside '…' and "…" strings skipped; `unclosed`: a last span that never closes. */
export function objectSpans(text: string): { spans: { start: number; text: string }[]; unclosed?: string } {
  const spans: { start: number; text: string }[] = [];
  let depth = 0;
  let start = -1;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote !== undefined) {
      if (c === '\\') i += 1;
      else if (c === quote) quote = undefined;
      continue;
    }
    if ((c === '"' || c === "'") && depth > 0) {
      // An apostrophe inside a word (it's) opens no string.
      if (c === "'" && /\w/.test(text[i - 1] ?? '') && /\w/.test(text[i + 1] ?? '')) continue;
      quote = c;
    } else if (c === '{') {
      if (depth === 0) start = i;
      depth += 1;
    } else if (c === '}' && depth > 0) {
      depth -= 1;
      if (depth === 0) spans.push({ start, text: text.slice(start, i + 1) });
    }
  }
  return depth > 0 ? { spans, unclosed: text.slice(start) } : { spans };
}

/** ReAct: `Action: NAME` then `Action Input: …` (to `Observation:` or the end). */
function readReact(text: string): { start: number; reading: Reading } | undefined {
  const action = ACTION_LINE.exec(text);
  if (action === null) return undefined;
  const name = (action[1] ?? '').trim().replace(/^`|`$/g, '');
  if (name === '' || name.startsWith('{')) return undefined;
  const after = text.slice(action.index + action[0].length);
  const input = ACTION_INPUT.exec(after);
  if (input === null) return { start: action.index, reading: readObject({ tool: name }, ['react']) };
  const raw = after.slice(input.index + input[0].length).split(/^[ \t]*observation\s*:/im)[0] ?? '';
  const body = unfence(raw.trim());
  const object = parseObject(body);
  if (object !== undefined) return { start: action.index, reading: readObject({ tool: name, arguments: object.value }, object.repaired ? ['react', 'json-syntax'] : ['react']) };
  if (body.startsWith('{') && ACTION_LIKE_KEY.test(body)) return { start: action.index, reading: unparseable(body) };
  const quoted = /^"(?:[^"\\]|\\.)*"$/.test(body) ? (JSON.parse(body) as string) : body;
  return { start: action.index, reading: readObject({ tool: name, command: quoted }, ['react']) };
}

function unfence(text: string): string {
  const m = /^```[^\n`]*\n([\s\S]*?)```$/.exec(text);
  return m === null ? text : (m[1] ?? '').trim();
}

/**
 * One JSON object → an action, a final answer, invalid, or `other` (not about actions: data in
 * prose). `repairs` so far (how it was found) are extended with how it was named.
 */
function readObject(object: Record<string, unknown>, found: RepairKind[]): Reading {
  const repairs = [...found];
  const keys = Object.keys(object);
  const finalKey = keys.find((k) => FINAL_ALIASES.includes(norm(k)) && norm(k) !== 'answer' && norm(k) !== 'done');
  const toolKey = TOOL_KEYS.find((k) => typeof object[k] === 'string');
  const toolName = toolKey === undefined ? undefined : (object[toolKey] as string);
  // `input` is a container when it holds an object, else an alias of command.
  const container = ARG_CONTAINERS.find((k) => (k === 'input' ? isRecord(object[k]) : k in object));
  const commandKey = ['command', ...COMMAND_ALIASES].find((k) => k in object && k !== container);

  if (finalKey !== undefined && toolName === undefined && commandKey === undefined) {
    if (finalKey !== 'final') repairs.push('final-alias');
    const value = object[finalKey];
    return { kind: 'final', text: typeof value === 'string' ? value : JSON.stringify(value), repairs };
  }
  if (toolName !== undefined && FINAL_ALIASES.includes(norm(toolName))) {
    repairs.push('final-alias');
    const otherString = keys.find((k) => k !== toolKey && typeof object[k] === 'string');
    const value = container !== undefined ? object[container] : commandKey !== undefined ? object[commandKey] : otherString === undefined ? '' : object[otherString];
    const textValue = isRecord(value) ? (Object.values(value).find((v) => typeof v === 'string') ?? JSON.stringify(value)) : value;
    return { kind: 'final', text: typeof textValue === 'string' ? textValue : JSON.stringify(textValue ?? ''), repairs };
  }
  if (toolName === undefined && commandKey === undefined) return { kind: 'other' };

  if (toolName !== undefined && norm(toolName) !== SHELL_TOOL) {
    if (!SHELL_TOOL_ALIASES.includes(norm(toolName))) {
      return { kind: 'invalid', why: 'unknown-tool', reason: `unknown tool ${JSON.stringify(toolName)} (the only tool is ${SHELL_TOOL})`, repairs, tool: toolName, args: object };
    }
    repairs.push('tool-alias');
  }
  if (toolName === undefined) repairs.push('implied-tool');
  if (toolKey !== undefined && toolKey !== 'tool') repairs.push('nested-args');
  let args: Record<string, unknown> = object;
  if (container !== undefined) {
    const inner = object[container];
    const parsedInner = typeof inner === 'string' ? parseObject(inner)?.value : undefined;
    args = isRecord(inner) ? inner : (parsedInner ?? { command: inner });
    if (!repairs.includes('nested-args')) repairs.push('nested-args');
  }
  const argKey = ['command', ...COMMAND_ALIASES].find((k) => k in args);
  const tool = toolName ?? SHELL_TOOL;
  if (argKey === undefined) return { kind: 'invalid', why: 'missing-command', reason: `${tool}: no command given`, repairs, tool, args };
  if (argKey !== 'command') repairs.push('arg-alias');
  const command = args[argKey];
  if (typeof command !== 'string' || command.trim() === '') return { kind: 'invalid', why: 'missing-command', reason: `${tool}: the command must be a non-empty string`, repairs, tool, args };

  const timeout = args.timeout_sec ?? args.timeout;
  if (timeout !== undefined && (typeof timeout !== 'number' || !(timeout > 0) || timeout > MAX_COMMAND_TIMEOUT_SEC)) {
    return { kind: 'invalid', why: 'bad-arguments', reason: `${tool}: timeout_sec must be a number of seconds in (0, ${MAX_COMMAND_TIMEOUT_SEC}]`, repairs, tool, args };
  }
  const known = new Set<string>([argKey, 'timeout_sec', 'timeout', 'confirmation', ...(args === object ? TOOL_KEYS : [])]);
  const outerKnown = new Set<string>([...TOOL_KEYS, ...(container === undefined ? [] : [container])]);
  const extra = Object.keys(args).some((k) => !known.has(k)) || (args !== object && Object.keys(object).some((k) => !outerKnown.has(k)));
  if (extra) repairs.push('extra-keys');
  const action: TextAction = {
    tool: SHELL_TOOL,
    command,
    ...(typeof timeout === 'number' ? { timeout_sec: timeout } : {}),
    ...(args.confirmation === undefined ? {} : { confirmation: args.confirmation }),
  };
  return { kind: 'action', action, repairs };
}
