/**
 * Installed agents: the Claude Code and Codex layers over log-triage's image,
 * then `<agent> --version` through the sandbox session — enforced (Landlock +
 * seccomp) under the task's gold plus the adapter's runtime grant, and traced.
 * Without the grant (the gold alone: no read or execute of the agent's
 * prefix) it fails, and the denial is in the trace. The layers are cached by
 * content hash: warm, a few seconds; cold, each npm install adds 15-30.
 *
 * The layer build needs the npm registry. The decision is explicit: in the
 * Docker test tiers (AUTHBENCH_TEST_TIER=ci|full) and under CI the registry
 * is required and an unreachable one fails the test, naming the agent and the
 * install step; in a bare local run (no tier) the suite is skipped, visibly,
 * when the host cannot reach the registry.
 *
 * The build CA: $AUTHBENCH_BUILD_CA when set, else the certificates the host
 * added to its trust store (/usr/local/share/ca-certificates/*.crt, where a
 * TLS-intercepting proxy's CA is installed); none when there are none. The
 * whole system bundle does not fit: a build arg is one environment string
 * (128 KiB at most).
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_PREFIX, buildAgentLayer, getAgent, versionCommand, withRuntimeGrant, type AgentAdapter, type AgentLayer } from '../../agents/index.ts';
import { AuthbenchError } from '../../core/index.ts';
import { cleanManaged, connectDocker, LABELS, type DockerEngine } from '../../docker/index.ts';
import { resolvePolicy, taskImplicit } from '../../goldstore/index.ts';
import type { Policy } from '../../sandbox/policy/index.ts';
import type { SandboxResult } from '../../sandbox/run/index.ts';
import { loadTask } from '../../task-format/index.ts';
import { buildTaskImage, openTaskSandbox, type TaskSandbox } from '../../taskenv/index.ts';
import { hostBuildCa, skipAgentLayers } from './agent-registry.ts';

const skip = await skipAgentLayers();
const RUN_ID = `agents-test-${process.pid}-${Date.now()}`;
const task = await loadTask('tasks/log-triage');

/** What each agent's enforced `--version` must show: its output, and the executables its trace must hold. */
const CASES = [
  // Claude Code 2.x ships a native binary (its platform package): no node at run time.
  { agent: getAgent('claude-code'), stdout: (v: string) => `${v} (Claude Code)`, execs: [`${AGENT_PREFIX}/bin/claude`] },
  // Codex's bin is a Node script that starts its native binary.
  { agent: getAgent('codex'), stdout: (v: string) => `codex-cli ${v}`, execs: [`${AGENT_PREFIX}/bin/node`] },
] as const;

let engine: DockerEngine;
let taskImage: string;
let gold: Policy;
const layers = new Map<string, AgentLayer>();
const boxes: TaskSandbox[] = [];

beforeAll(async () => {
  if (skip) return;
  engine = await connectDocker();
  taskImage = (await buildTaskImage(engine, task)).tag;
  gold = (await resolvePolicy('gold', task, 'oracle-traces')).policy;
  const hostAccess = await hostBuildCa();
  // One at a time: a cold npm install saturates the machine's cores.
  for (const { agent } of CASES) layers.set(agent.name, await buildAgentLayer(engine, { taskImage, taskId: task.id, agent, hostAccess }));
});

afterAll(async () => {
  for (const box of boxes) await box[Symbol.asyncDispose]();
  if (engine !== undefined) await cleanManaged(engine, { labels: { [LABELS.run]: RUN_ID } });
});

async function version(agent: AgentAdapter, policy: Policy): Promise<SandboxResult> {
  const layer = layers.get(agent.name);
  if (layer === undefined) throw new Error(`no layer for ${agent.name}`);
  const box = await openTaskSandbox(engine, task, layer.tag, { runId: RUN_ID });
  boxes.push(box);
  const { argv, env } = versionCommand(agent);
  return box.session.run({ cmd: argv, env, mode: { kind: 'enforce', policy, implicit: taskImplicit(task) }, trace: true, timeoutMs: 120_000 });
}

const TITLE = 'agent layers over log-triage';

describe.skipIf(skip)(skip ? `${TITLE} (skipped: the npm registry is unreachable and no test tier is set)` : TITLE, () => {
  describe.each(CASES.map((c) => [c.agent.name, c] as const))('%s', (_name, { agent, stdout, execs }) => {
    it('is labelled with the agent and its pinned version, and keeps no build CA in its config', async () => {
      const info = await engine.imageInfo(layers.get(agent.name)?.tag ?? '');
      expect(info?.labels['authbench.agent']).toBe(agent.name);
      expect(info?.labels['authbench.agent-package']).toBe(`${agent.install.package}@${agent.install.version}`);
      expect(info?.labels[LABELS.task]).toBe(task.id);
      expect(JSON.stringify(info?.env ?? [])).not.toMatch(/AUTHBENCH_BUILD_CA|NODE_EXTRA_CA_CERTS/);
    });

    it('runs `--version` enforced and traced under the gold plus the runtime grant', async () => {
      const r = await version(agent, withRuntimeGrant(gold, agent));
      expect(r.enforcement.level).toBe('full');
      expect(r.exec.exitCode, r.exec.stderr).toBe(0);
      expect(r.exec.stdout.trim()).toBe(stdout(agent.install.version));
      const ran = r.events.flatMap((e) => (e.kind === 'exec' && e.result === 0 ? [e.path] : []));
      for (const path of execs) expect(ran).toContain(path);
      // Nothing the policy governs was refused; the seccomp filter always refuses io_uring, which Node (libuv) probes and then does without.
      expect(r.denials.filter((e) => e.kind !== 'seccomp' || e.syscall !== 'io_uring_setup')).toEqual([]);
    });

    it('fails under the gold alone, with the denied access to the agent’s prefix in the trace', async () => {
      const r = await version(agent, gold);
      expect(r.enforcement.level).toBe('full');
      expect(r.exec.exitCode).not.toBe(0);
      expect(r.exec.stdout).not.toContain(agent.install.version);
      const denied = r.denials.flatMap((e) => ('path' in e && typeof e.path === 'string' ? [e.path] : []));
      expect(denied.some((p) => p.startsWith(`${AGENT_PREFIX}/`)), JSON.stringify(r.denials)).toBe(true);
    });
  });

  it('a failed install is an infrastructure error naming the agent and the step', async () => {
    const agent = getAgent('claude-code');
    // A "Node binary" that cannot run: the build stops at the node step, before any network.
    const dir = await mkdtemp(join(tmpdir(), 'authbench-agents-test-'));
    try {
      const broken = join(dir, 'node');
      await writeFile(broken, '#!/bin/sh\necho broken node >&2\nexit 3\n');
      await chmod(broken, 0o755);
      const error = await buildAgentLayer(engine, { taskImage, taskId: task.id, agent, nodeBinary: broken }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(AuthbenchError);
      const e = error as AuthbenchError;
      expect([e.code, e.exitCode]).toEqual(['IMAGE_BUILD_FAILED', 125]);
      expect(e.message).toContain('installing agent claude-code (@anthropic-ai/claude-code@');
      expect(e.message).toContain('failed at step node');
      expect(e.details.join('\n')).toContain('broken node');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
