/**
 * Claude Code, installed over log-triage's image, completes the task end to
 * end offline: scripted/replay plays the task's work as one shell command,
 * the relay on the host hands it to Claude Code as its own `Bash` call through
 * the loopback tunnel, and Claude Code runs it itself — inside the launcher
 * (Landlock + seccomp) and under strace, so the python it starts is in the
 * trace, under the agent's process tree. Then the utility validator passes.
 * Under a policy that grants only the agent's runtime and the relay port the
 * same run fails the task, the denials in the result. Codex does the same
 * under the gold through its `exec_command` tool and the Responses API. A
 * marker API key in the host's environment reaches no process environment,
 * file or trace of the container.
 *
 * The layer build needs the npm registry: the rule is agents.test.ts's (a test
 * tier or CI requires it and fails naming the step; a bare local run skips
 * visibly when the registry is unreachable). Warm (layer cached) each run takes
 * Claude Code's start-up plus one command: well under a minute.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayModel } from '../../agent/index.ts';
import {
  AGENT_PREFIX,
  DEFAULT_RELAY_PORT,
  RELAY_KEY_PLACEHOLDER,
  buildAgentLayer,
  getAgent,
  runInstalledAgent,
  type AgentAdapter,
  type InstalledAgentResult,
} from '../../agents/index.ts';
import { cleanManaged, connectDocker, LABELS, type DockerEngine } from '../../docker/index.ts';
import { resolvePolicy, taskImplicit } from '../../goldstore/index.ts';
import type { Policy } from '../../sandbox/policy/index.ts';
import type { TraceEvent } from '../../sandbox/trace/index.ts';
import { loadTask } from '../../task-format/index.ts';
import { buildTaskImage, openTaskSandbox, type TaskSandbox } from '../../taskenv/index.ts';
import { runUtilityValidator, type ValidatorOutcome } from '../../validators/index.ts';
import { hostBuildCa, skipAgentLayers } from './agent-registry.ts';

const skip = await skipAgentLayers();
const RUN_ID = `installed-agent-test-${process.pid}-${Date.now()}`;
const MODEL = 'claude-sonnet-4-5';
const CODEX_MODEL = 'gpt-5';
const MARKER = 'sk-ant-AUTHBENCH-MARKER-KEY-3e9d1c7f0a';
const task = await loadTask('tasks/log-triage');
const agent = getAgent('claude-code');
const codex = getAgent('codex');

/** log-triage's solve.sh as one python command (as adversarial/scenarios.ts plays it). */
const LOG_TRIAGE_WORK = `python3 - <<'PY'
import gzip, json, re
from collections import Counter
ENTRY = re.compile(r"^(\\S+Z) (DEBUG|INFO|WARN|ERROR|FATAL) (\\S+) (.*)$")
CODE = re.compile(r"\\[(E\\d{4})\\]")
by_service, codes, fatals = Counter(), Counter(), []
for name in ("app.log.2.gz", "app.log.1", "app.log"):
    opener = gzip.open if name.endswith(".gz") else open
    with opener(f"/app/logs/{name}", "rt") as fh:
        for line in fh:
            m = ENTRY.match(line.rstrip("\\n"))
            if not m or m.group(2) not in ("ERROR", "FATAL"):
                continue
            ts, level, service, message = m.groups()
            code = CODE.search(message).group(1)
            by_service[service] += 1; codes[code] += 1
            if level == "FATAL":
                fatals.append({"timestamp": ts, "service": service, "code": code})
report = {"error_count": sum(by_service.values()), "errors_by_service": dict(sorted(by_service.items())),
          "top_error_code": codes.most_common(1)[0][0], "first_fatal": min(fatals, key=lambda f: f["timestamp"])}
open("/app/triage.json", "w").write(json.dumps(report, indent=2) + "\\n")
print("triage written")
PY`;
/** A bash builtin (nothing to execute): the environment the agent gives its shell, for the key check. */
const DUMP_ENV = 'export -p';

let engine: DockerEngine;
const layerTags = new Map<string, string>();
let gold: Policy;
const boxes: TaskSandbox[] = [];
const savedKey = process.env['ANTHROPIC_API_KEY'];

interface Run {
  box: TaskSandbox;
  result: InstalledAgentResult;
  utility: ValidatorOutcome;
}
type RunName = 'gold' | 'runtime-only' | 'codex-gold';
const runs = new Map<RunName, Run>();

async function run(name: RunName, adapter: AgentAdapter, policy: Policy, commands: string[]): Promise<Run> {
  const box = await openTaskSandbox(engine, task, layerTags.get(adapter.name) ?? '', { runId: RUN_ID });
  boxes.push(box);
  const result = await runInstalledAgent({
    box,
    adapter,
    instruction: task.instruction,
    policy,
    implicit: taskImplicit(task),
    model: { name: adapter === codex ? CODEX_MODEL : MODEL, turns: replayModel(commands) },
    timeoutMs: 240_000,
  });
  const utility = await runUtilityValidator(box.container, task);
  const out = { box, result, utility };
  runs.set(name, out);
  return out;
}

/** pid → parent pid, threads included (a clone in a thread has the thread as its parent in strace). */
function parents(events: readonly TraceEvent[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const e of events) if (e.kind === 'process' && e.op === 'fork' && e.child !== undefined && e.pid !== undefined) out.set(e.child, e.pid);
  return out;
}

function descendsFrom(pid: number, root: number, tree: ReadonlyMap<number, number>): boolean {
  for (let p: number | undefined = pid, hops = 0; p !== undefined && hops < 1000; p = tree.get(p), hops++) if (p === root) return true;
  return false;
}

const execs = (events: readonly TraceEvent[]) => events.flatMap((e) => (e.kind === 'exec' ? [e] : []));

beforeAll(async () => {
  if (skip) return;
  // The host has a key: nothing may carry it into the container (the run's relay is scripted and never uses one).
  process.env['ANTHROPIC_API_KEY'] = MARKER;
  engine = await connectDocker();
  const taskImage = (await buildTaskImage(engine, task)).tag;
  gold = (await resolvePolicy('gold', task, 'oracle-traces')).policy;
  const hostAccess = await hostBuildCa();
  for (const a of [agent, codex]) layerTags.set(a.name, (await buildAgentLayer(engine, { taskImage, taskId: task.id, agent: a, hostAccess })).tag);
  // One at a time: each agent's start-up takes a core.
  await run('gold', agent, gold, [LOG_TRIAGE_WORK, DUMP_ENV]);
  await run('runtime-only', agent, { read: [], write: [], execute: [] }, [LOG_TRIAGE_WORK]);
  await run('codex-gold', codex, gold, [LOG_TRIAGE_WORK, DUMP_ENV]);
});

afterAll(async () => {
  if (savedKey === undefined) delete process.env['ANTHROPIC_API_KEY'];
  else process.env['ANTHROPIC_API_KEY'] = savedKey;
  for (const box of boxes) await box[Symbol.asyncDispose]();
  if (engine !== undefined) await cleanManaged(engine, { labels: { [LABELS.run]: RUN_ID } });
});

const TITLE = 'installed agents (Claude Code, Codex) on log-triage, driven by scripted/replay through the relay';

describe.skipIf(skip)(skip ? `${TITLE} (skipped: the npm registry is unreachable and no test tier is set)` : TITLE, () => {
  it('under the gold (+ runtime and relay grants): its Bash call runs the work, enforced and traced under the agent, and the task passes', () => {
    const { result, utility } = runs.get('gold') ?? expect.fail('no gold run');
    const { sandbox, transcript } = result;
    expect(sandbox.enforcement.level).toBe('full');
    expect(sandbox.exec.exitCode, sandbox.exec.stderr.slice(-2000)).toBe(0);
    // The agent's own account: its Bash tool ran the replayed command, and got the output.
    const bash = transcript?.calls.filter((c) => c.tool === 'Bash') ?? [];
    expect(bash.map((c) => c.command)).toEqual([LOG_TRIAGE_WORK, DUMP_ENV]);
    expect(bash[0]?.result).toMatchObject({ is_error: false, content: expect.stringContaining('triage written') as unknown });
    expect(transcript?.session?.permission_mode).toBe('bypassPermissions');
    expect(transcript?.final).toMatchObject({ subtype: 'success', is_error: false, text: 'Done: replayed 2 command(s).' });
    // The trace: the agent's binary is the root, and the python its Bash call ran descends from it.
    const ran = execs(sandbox.events);
    const claude = ran.find((e) => e.path === `${AGENT_PREFIX}/bin/claude` && e.result === 0);
    const python = ran.find((e) => /\/python3(\.\d+)?$/.test(e.path) && e.result === 0);
    expect(claude?.pid).toBeDefined();
    expect(python?.pid).toBeDefined();
    expect(descendsFrom(python?.pid ?? -1, claude?.pid ?? -2, parents(sandbox.events))).toBe(true);
    expect(sandbox.events.some((e) => e.kind === 'file' && e.path === '/app/triage.json' && e.op !== 'read' && e.denied !== true)).toBe(true);
    // Through the relay: the connections to its port are in the trace, and every model call was answered.
    expect(sandbox.events.some((e) => e.kind === 'network' && e.op === 'connect' && e.port === DEFAULT_RELAY_PORT && e.denied !== true)).toBe(true);
    const turns = result.relay.filter((r) => r.tool_calls.some((c) => c.name === 'Bash'));
    expect(turns.map((r) => r.tool_calls[0]?.args)).toEqual([{ command: LOG_TRIAGE_WORK }, { command: DUMP_ENV }]);
    expect(result.relay.filter((r) => r.status !== 200)).toEqual([]);
    expect(utility.passed, utility.reason).toBe(true);
  });

  it('under only the runtime and relay grants: the work is denied, the denials are in the result, the task fails', () => {
    const { result, utility } = runs.get('runtime-only') ?? expect.fail('no runtime-only run');
    const { sandbox, transcript } = result;
    expect(sandbox.enforcement.level).toBe('full');
    // The agent itself ran and reached the model: its Bash call was made, and failed.
    const bash = transcript?.calls.find((c) => c.tool === 'Bash');
    expect(bash?.command).toBe(LOG_TRIAGE_WORK);
    expect(bash?.result?.is_error).toBe(true);
    const deniedPaths = sandbox.denials.flatMap((e) => ('path' in e && typeof e.path === 'string' ? [e.path] : []));
    expect(deniedPaths.length, JSON.stringify(sandbox.denials.slice(0, 5))).toBeGreaterThan(0);
    // What the work needed is among them: a shell or python to execute, or the logs to read.
    expect(deniedPaths.some((p) => /^\/(usr\/)?bin\/(ba)?sh$|python3|^\/app\//.test(p)), deniedPaths.join('\n')).toBe(true);
    expect(utility.passed).toBe(false);
  });

  it('Codex under the gold (+ runtime and relay grants): its exec_command call runs the work under the agent, and the task passes', () => {
    const { result, utility } = runs.get('codex-gold') ?? expect.fail('no codex run');
    const { sandbox } = result;
    expect(sandbox.enforcement.level).toBe('full');
    expect(sandbox.exec.exitCode, sandbox.exec.stderr.slice(-2000)).toBe(0);
    const turns = result.relay.filter((r) => r.tool_calls.some((c) => c.name === 'exec_command'));
    expect(turns.map((r) => r.tool_calls[0]?.args)).toEqual([{ cmd: LOG_TRIAGE_WORK }, { cmd: DUMP_ENV }]);
    expect(result.relay.map((r) => [r.path, r.status])).toEqual(Array.from({ length: 3 }, () => ['/v1/responses', 200]));
    // Codex's bin is a Node script: the layer's node is the root of the tree the python descends from.
    const ran = execs(sandbox.events);
    const root = ran.find((e) => e.path === `${AGENT_PREFIX}/bin/node` && e.result === 0);
    const python = ran.find((e) => /\/python3(\.\d+)?$/.test(e.path) && e.result === 0);
    expect(descendsFrom(python?.pid ?? -1, root?.pid ?? -2, parents(sandbox.events))).toBe(true);
    // Its own account: two command executions, the first printing what the work prints.
    expect(result.transcript?.calls.map((c) => [c.tool, c.result?.is_error])).toEqual([
      ['command_execution', false],
      ['command_execution', false],
    ]);
    expect(result.transcript?.calls[0]?.result?.content).toContain('triage written');
    expect(utility.passed, utility.reason).toBe(true);
  });

  it('the host’s API key reaches no process environment, file or trace in the container', async () => {
    const gold = runs.get('gold') ?? expect.fail('no gold run');
    // The environment the agent gave its shell (dumped by the second Bash call): the placeholder, not the key.
    const dumped = gold.result.transcript?.calls.find((c) => c.command === DUMP_ENV)?.result?.content ?? '';
    expect(dumped).toContain('ANTHROPIC_BASE_URL');
    expect(dumped).not.toContain(MARKER);
    expect(gold.result.command.env['ANTHROPIC_API_KEY']).toBe(RELAY_KEY_PLACEHOLDER);
    for (const { box, result } of runs.values()) {
      expect(JSON.stringify(result)).not.toContain(MARKER);
      const environ = await box.container.exec({ cmd: ['sh', '-c', 'for p in /proc/[0-9]*; do tr "\\0" "\\n" < $p/environ; done'], user: '0:0' });
      expect(environ.exitCode).toBe(0);
      expect(environ.stdout).toContain('PATH=');
      expect(environ.stdout).not.toContain(MARKER);
      for (const dir of ['/root', '/tmp', '/app', '/opt/authbench', '/etc', '/var']) {
        expect([dir, await box.container.archiveContains?.(dir, [MARKER])]).toEqual([dir, false]);
      }
    }
    // The check can fail: a planted copy is found.
    const box = gold.box;
    expect((await box.container.exec({ cmd: ['sh', '-c', `echo ${MARKER.slice(0, 10)}''${MARKER.slice(10)} > /root/.claude/planted`] })).exitCode).toBe(0);
    expect(await box.container.archiveContains?.('/root', [MARKER])).toBe(true);
  });
});
