/**
 * An installed agent as data: which npm package at which exact version, how it
 * runs headless on one instruction, what it needs in its environment, which of
 * its own permission prompts it turns off, and the smallest grant its runtime
 * needs on top of a task's policy. Python agents fit the same shape once their
 * registry is reachable (`install` would name pip instead of npm).
 */
import { z } from 'zod';
import { PolicySchema } from '../sandbox/policy/index.ts';

/** Exact `MAJOR.MINOR.PATCH` (with a pre-release or calendar version allowed): a range is not reproducible. */
const EXACT_VERSION = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/;

export const AgentNameSchema = z
  .string()
  .regex(/^[a-z][a-z0-9-]*$/)
  .describe('The adapter name used on the command line (`--agent NAME`), lower case.');

export const NpmInstallSchema = z
  .strictObject({
    package: z.string().regex(/^(@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/).describe('The npm package name.'),
    version: z.string().regex(EXACT_VERSION, 'an exact version, not a range').describe('The exact version installed; a range would make the layer depend on the day it was built.'),
    before: z.iso
      .datetime({ offset: true })
      .describe("npm's `--before`: transitive dependencies resolve to what was published by then, so a rebuild gets the same tree."),
    bin: z.string().regex(/^[A-Za-z0-9._-]+$/).describe('The executable the package installs into the prefix `bin/`.'),
    runtime: z
      .enum(['node', 'native'])
      .describe('`node`: the bin is a Node script, run as `node BIN` (its `#!/usr/bin/env node` would need /usr/bin/env granted and node on PATH); `native`: an executable of its own.'),
  })
  .describe('How the agent is installed: `npm install -g` into the layer prefix, inside the build.');

export const PromptsOffSchema = z
  .strictObject({
    flags: z.array(z.string()).describe('The headless-command flags that turn the agent’s own approval prompts and sandbox off.'),
    why: z.string().describe('What they turn off and why: the enforced policy is the boundary, not the agent’s prompts.'),
  })
  .describe('The agent’s own permission prompts, turned off and recorded as such.');

export const ShellToolSchema = z
  .strictObject({
    name: z.string().min(1).describe('The tool name the agent declares to its model (Claude Code: `Bash`).'),
    command: z.string().min(1).describe('The argument that holds the command line, one string.'),
    timeout: z
      .strictObject({
        arg: z.string().min(1).describe('The argument that holds the timeout.'),
        unit: z.enum(['ms', 's']).describe('Its unit.'),
      })
      .optional()
      .describe('Where the agent takes a per-call timeout, if it takes one.'),
  })
  .describe(
    "The agent's own shell tool, as its model calls it: how an authbench model's `shell` call (a scripted one, through the relay) becomes the agent's tool call.",
  );

export const TRANSCRIPT_FORMATS = ['claude-code-stream-json', 'codex-exec-json'] as const;

export const AgentAdapterSchema = z
  .strictObject({
    name: AgentNameSchema,
    description: z.string().describe('One line for `agents list`.'),
    install: NpmInstallSchema,
    /**
     * `{instruction}` stands for the task instruction (one argv element, never
     * spliced into a shell string); `{model}` for the model name; `{relay}` for the relay URL.
     */
    headless: z.array(z.string()).min(1).describe('Headless argv with `{instruction}`, `{model}` and `{relay}` placeholders; the first element is the bin.'),
    env: z
      .record(z.string().regex(/^[A-Z_][A-Z0-9_]*$/), z.string())
      .describe('Environment for a run; `{relay}` stands for the relay URL given at run time, `{model}` for the model name. Never a real API key: keys stay on the host, in the relay.'),
    promptsOff: PromptsOffSchema,
    stateDirs: z.array(z.string().startsWith('/')).describe('Where the agent writes its own state and config at run time (under HOME).'),
    runtimeGrant: PolicySchema.describe('The least the agent’s runtime needs beyond the task’s policy: its install prefix and node (read, execute), its state directories (write).'),
    shellTool: ShellToolSchema.optional().describe('Absent: no authbench model can drive the agent yet (its shell tool is not mapped).'),
    transcript: z
      .enum(TRANSCRIPT_FORMATS)
      .optional()
      .describe('The format of its headless stdout that `parseTranscript` reads into tool calls and results; absent: not parsed yet.'),
    scriptedModel: z
      .string()
      .min(1)
      .optional()
      .describe('The model name the agent is told when a scripted model drives it (one the agent accepts; the relay serves only it).'),
  })
  .describe('An installed CLI agent: install, headless command line, environment, prompts turned off, runtime grant.');

export type AgentAdapter = z.infer<typeof AgentAdapterSchema>;
export type NpmInstall = z.infer<typeof NpmInstallSchema>;
export type ShellTool = z.infer<typeof ShellToolSchema>;
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number];
