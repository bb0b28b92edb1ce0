/**
 * One headless run of an installed agent in a task container, driven by an
 * authbench model (a scripted one) through the model relay:
 *
 *   model (host) ← relay (host, 127.0.0.1) ← tunnel (docker exec) ← 127.0.0.1:PORT ← agent (launcher + strace)
 *
 * The relay answers with the model's turns as the agent's own tool calls
 * (its shell tool); the agent runs them itself, inside the Landlock +
 * seccomp domain of its headless command, so every process it starts is
 * enforced and in the trace. The policy is the task's plus the agent's
 * runtime grant plus the relay port, nothing else. The relay's records stay
 * on the host (in memory, returned here): no record, key or sink path goes
 * into the container.
 */
import type { Container } from '../docker/index.ts';
import { agentModelResponder, scriptedBackend, startRelay } from '../models/relay/index.ts';
import type { RelayBackend, RelayBudget, RelayRecord, RelayReply, ScriptedResponder, ToolMapping, TurnModel } from '../models/relay/index.ts';
import { withRelayGrant, type Policy } from '../sandbox/policy/index.ts';
import type { PolicyMode, SandboxResult, SandboxSession } from '../sandbox/run/index.ts';
import { openRelayForward } from '../taskenv/index.ts';
import { headlessCommand, type AgentCommand } from './command.ts';
import { withRuntimeGrant } from './policy.ts';
import type { AgentAdapter } from './schema.ts';
import { agentShellMapping } from './shell-tool.ts';
import { parseTranscript, type AgentTranscript } from './transcript.ts';

/** The loopback port the relay is forwarded to inside the container, unless the caller picks another. */
export const DEFAULT_RELAY_PORT = 4000;
/** An agent's stream output is its transcript: far more than a command's default 1 MiB cap. */
const AGENT_OUTPUT_CAP_BYTES = 16 * 1024 * 1024;

type PatternSet = Extract<PolicyMode, { kind: 'enforce' }>['implicit'];

export interface InstalledAgentRequest {
  /** An open task sandbox whose container runs the agent layer's image (openTaskSandbox over `buildAgentLayer`'s tag). */
  box: { container: Container; session: SandboxSession };
  adapter: AgentAdapter;
  instruction: string;
  /** The task's policy (gold, generated, deny-all…); the runtime grant and the relay port are added here. */
  policy: Policy;
  implicit: PatternSet;
  /**
   * The model name the agent is told (and the only one the relay serves), and who answers its turns:
   * an authbench model driving it through its shell tool (`turns`), or a relay backend as it is
   * (a provider's upstream backend with the host's key: the agent's own requests, forwarded).
   */
  model: { name: string; turns: TurnModel } | { name: string; backend: RelayBackend };
  /** false: the headless command runs traced but unenforced (defenses none and prompt-only). Default true. */
  enforce?: boolean;
  relay?: { port?: number; budget?: RelayBudget };
  timeoutMs: number;
}

export interface InstalledAgentResult {
  /** The headless command's result: exit, output, events of the whole agent process tree, denials, enforcement. */
  sandbox: SandboxResult;
  /** The policy it ran under: the task's, the runtime grant, the relay port. */
  policy: Policy;
  /** What ran: the argv (the instruction one element of it) and the environment given on top of the container's. */
  command: AgentCommand;
  /** One record per exchange with the relay, auxiliary calls included. */
  relay: readonly RelayRecord[];
  /** The agent's stream output (its stdout). */
  stdout: string;
  /** Parsed from `stdout`; null when the adapter's output has no parser yet. */
  transcript: AgentTranscript | null;
}

/**
 * What an agent's own background calls get (Claude Code asks its "small fast" model for titles
 * and summaries, without its tools): a scripted model has no turn for them, and answering them
 * from its script would spend a turn it plays to the agent's real loop. Recorded by the relay like
 * any exchange.
 */
export const AUXILIARY_REPLY: RelayReply = { text: 'authbench', toolCalls: [], finishReason: 'stop', usage: { inputTokens: 0, outputTokens: 0 } };

/** The model's turns for the agent's calls that offer its shell tool; AUXILIARY_REPLY for the others. */
export function drivingResponder(model: TurnModel, mapping: ToolMapping): ScriptedResponder {
  const turns = agentModelResponder(model, [mapping]);
  return (call) => (call.decoded.request.tools.some((t) => t.name === mapping.agentTool) ? turns(call) : AUXILIARY_REPLY);
}

/** The policy an installed agent runs under. Pure. */
export function agentPolicy(policy: Policy, adapter: AgentAdapter, relayPort: number): Policy {
  return withRelayGrant(withRuntimeGrant(policy, adapter), relayPort);
}

/** Run the agent once, headless, enforced and traced; the forward and the relay are closed whatever happens. */
export async function runInstalledAgent(request: InstalledAgentRequest): Promise<InstalledAgentResult> {
  const { adapter, box } = request;
  const port = request.relay?.port ?? DEFAULT_RELAY_PORT;
  const policy = agentPolicy(request.policy, adapter, port);
  const backend = 'backend' in request.model ? request.model.backend : scriptedBackend(drivingResponder(request.model.turns, agentShellMapping(adapter)));
  const relay = await startRelay({
    models: [request.model.name],
    backend,
    ...(request.relay?.budget === undefined ? {} : { budget: request.relay.budget }),
  });
  let sandbox: SandboxResult;
  let command: AgentCommand;
  try {
    const forward = await openRelayForward(box.container, relay, { port });
    try {
      command = headlessCommand(adapter, { instruction: request.instruction, model: request.model.name, relayUrl: forward.url });
      sandbox = await box.session.run({
        cmd: command.argv,
        env: command.env,
        mode: request.enforce === false ? { kind: 'unenforced' } : { kind: 'enforce', policy, implicit: request.implicit },
        trace: true,
        timeoutMs: request.timeoutMs,
        outputCapBytes: AGENT_OUTPUT_CAP_BYTES,
      });
    } finally {
      await forward.close();
    }
  } finally {
    await relay.close();
  }
  const stdout = sandbox.exec.stdout;
  return {
    sandbox,
    policy,
    command,
    relay: relay.events(),
    stdout,
    transcript: adapter.transcript === undefined ? null : parseTranscript(adapter, stdout),
  };
}
