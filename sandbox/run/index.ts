export * from './session.ts';
export * from './patch.ts';
export { HostTraceRouter, type HostTrace, type HostTracer } from './host-trace.ts';
export { backgroundOf, foldBackground } from './background.ts';
export { AgentClient, AGENT_START_TIMEOUT_MS } from './agent-client.ts';
export type { AgentStartOptions } from './agent-client.ts';
/** The harness's own directory in every container, for consumers that must tell harness files from agent effects. */
export { HARNESS_ROOT } from '../launcher/index.ts';
