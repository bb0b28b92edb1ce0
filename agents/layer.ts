/**
 * An agent layer: the agent installed over a task's image, built like task
 * images (docker/build.ts) so it is cached by content hash — the task image's
 * id (the FROM), the Node binary, the generated Dockerfile and install script
 * (agent name, package, version, npm pin) and the labels all go into it.
 */
import { constants } from 'node:fs';
import { copyFile, link, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuthbenchError, isAuthbenchError } from '../core/index.ts';
import { type BuildHostAccess, type BuildResult, type Engine } from '../docker/index.ts';
import { CONTEXT_FILES, FETCH_SCRIPT, installScript, layerDockerfile, lastStep, STEP_DESCRIPTIONS } from './install.ts';
import type { AgentAdapter } from './schema.ts';

/** Labels an agent layer carries besides authbench's own (and `authbench.task`). */
export const AGENT_LABELS = { agent: 'authbench.agent', package: 'authbench.agent-package' } as const;

export interface AgentLayerRequest {
  /** The task image the layer goes over (a tag or id that exists locally). */
  taskImage: string;
  /** The task, for the `authbench.task` label. */
  taskId?: string;
  agent: AgentAdapter;
  /** CA certificates and proxies for the install step only (the registry behind a TLS-intercepting proxy); not kept, not hashed. */
  hostAccess?: BuildHostAccess;
  /** The Node binary copied in (default: the one running authbench, Node >= 24). */
  nodeBinary?: string;
  onProgress?: (line: string) => void;
}

export interface AgentLayer extends BuildResult {
  agent: string;
  package: string;
  version: string;
}

/** Repository of an agent layer; the tag is its content hash, as for task images. */
export function agentImageRepository(agent: string, taskId: string | undefined): string {
  return `authbench/agent-${agent}${taskId === undefined ? '' : `-${taskId.toLowerCase()}`}`;
}

/** A hard link where the temporary directory shares the binary's filesystem (no 100 MB copy per build), else a copy. */
async function placeNode(source: string, target: string): Promise<void> {
  try {
    await link(source, target);
  } catch {
    await copyFile(source, target, constants.COPYFILE_FICLONE);
  }
}

/**
 * Build (or find cached) the agent layer over a task image. A failed install
 * is an infrastructure error (exit 125) naming the agent and the step it
 * failed in, with the build's last lines.
 */
export async function buildAgentLayer(engine: Engine, request: AgentLayerRequest): Promise<AgentLayer> {
  const { agent } = request;
  const base = await engine.imageInfo(request.taskImage);
  if (base === undefined) {
    throw new AuthbenchError('IMAGE_NOT_FOUND', `task image ${request.taskImage} does not exist: build the task first`, { hint: 'authbench build TASK' });
  }
  const dir = await mkdtemp(join(tmpdir(), 'authbench-agent-'));
  let step: string | undefined;
  try {
    await placeNode(request.nodeBinary ?? process.execPath, join(dir, CONTEXT_FILES.node));
    await writeFile(join(dir, CONTEXT_FILES.script), installScript(agent));
    await writeFile(join(dir, CONTEXT_FILES.fetch), FETCH_SCRIPT);
    // FROM the image id, not the tag: the hash then follows the image, and a retag cannot swap the base under a cached layer.
    await writeFile(join(dir, 'Dockerfile'), layerDockerfile(base.id, agent));
    const result = await engine.buildImage({
      repository: agentImageRepository(agent.name, request.taskId),
      kind: 'task-image',
      contextDir: dir,
      labels: { [AGENT_LABELS.agent]: agent.name, [AGENT_LABELS.package]: `${agent.install.package}@${agent.install.version}` },
      // The FROM is a local image id: never substitute it.
      baseMap: { mode: 'never' },
      ...(request.taskId === undefined ? {} : { taskId: request.taskId }),
      ...(request.hostAccess === undefined ? {} : { hostAccess: request.hostAccess }),
      onProgress: (line) => {
        step = lastStep([line]) ?? step;
        request.onProgress?.(line);
      },
    });
    return { ...result, agent: agent.name, package: agent.install.package, version: agent.install.version };
  } catch (e) {
    if (isAuthbenchError(e) && e.code === 'IMAGE_BUILD_FAILED') {
      const failed = lastStep(e.details) ?? step;
      const what = failed === undefined ? 'building the layer' : `step ${failed} (${STEP_DESCRIPTIONS[failed as keyof typeof STEP_DESCRIPTIONS]})`;
      throw new AuthbenchError('IMAGE_BUILD_FAILED', `installing agent ${agent.name} (${agent.install.package}@${agent.install.version}) failed at ${what}`, {
        details: e.details,
        hint:
          failed === 'npm' || failed === 'install'
            ? 'the npm registry must be reachable from image builds; behind a TLS-intercepting proxy pass --build-ca (and --build-proxy-from-env)'
            : 'the task image must be glibc-based (Debian/Ubuntu) with sh and tar',
        cause: e,
      });
    }
    throw e;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Whether an image is an agent layer, and of which agent (from its labels). */
export function agentOfImage(labels: Readonly<Record<string, string>>): string | undefined {
  return labels[AGENT_LABELS.agent];
}

