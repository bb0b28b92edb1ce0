/**
 * Installed agents: third-party CLI agents (Claude Code, Codex, OpenClaw)
 * installed into a cached layer over a task image, and how they run headless
 * inside it — under the launcher and strace like any command (sandbox/run).
 */
export * from './schema.ts';
export { AGENT_PREFIX, RELAY_KEY_PLACEHOLDER, getAgent, listAgents } from './registry.ts';
export { headlessCommand, versionCommand } from './command.ts';
export type { AgentCommand, HeadlessInput } from './command.ts';
export { INSTALL_STEPS, NPM_PIN, STEP_DESCRIPTIONS, installScript, lastStep, layerDockerfile } from './install.ts';
export type { InstallStep } from './install.ts';
export { AGENT_LABELS, agentImageRepository, agentOfImage, buildAgentLayer } from './layer.ts';
export type { AgentLayer, AgentLayerRequest } from './layer.ts';
export { agentVersion } from './probe.ts';
export { withRuntimeGrant } from './policy.ts';
export { MODEL_SHELL_TOOL, agentShellMapping, shellToolMapping } from './shell-tool.ts';
export { AgentTranscriptSchema, TranscriptCallSchema, parseClaudeStreamJson, parseCodexExecJson, parseTranscript } from './transcript.ts';
export type { AgentTranscript, TranscriptCall } from './transcript.ts';
export { AUXILIARY_REPLY, DEFAULT_RELAY_PORT, agentPolicy, drivingResponder, runInstalledAgent } from './run.ts';
export type { InstalledAgentRequest, InstalledAgentResult } from './run.ts';
export { INSTALLED_AGENT_DEFENSES, installedDefense, supportedAgentDefenses } from './defenses.ts';
export type { InstalledDefenseSupport } from './defenses.ts';
export { agentModelName, agentProviders, providerBackend } from './model.ts';
// The relay's records, as an installed agent's run returns them (evaluation writes them into the trace).
export { RelayRecordSchema, type RelayRecord } from '../models/relay/index.ts';
