/**
 * What a long-lived process inside the container would answer in, for
 * comparison with a Docker exec per command. Our Container API cannot keep an
 * exec's stdin open across requests, so the agent listens on TCP in a
 * bridge-networked container and the host talks to it directly. (Task
 * containers run with network none: a production agent would need an attached
 * exec stream instead; the in-container cost is the same.)
 */
import { connect, type Socket } from 'node:net';
import { AuthbenchError } from '../../core/index.ts';
import type { Container } from '../../docker/index.ts';
import { summarize, type Summary } from './stats.ts';
import type { Rounds } from './plan.ts';

const AGENT_PORT = 7399;
const AGENT_PATH = '/opt/authbench-bench/agent.py';
const CONNECT_DEADLINE_MS = 10_000;

/** One JSON request per line: null is a ping, an argv array is run (stdio on /dev/null); the reply is the exit code. */
export const AGENT_SOURCE = String.raw`import json, os, socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", ${AGENT_PORT}))
s.listen(1)
null = os.open("/dev/null", os.O_RDWR)
conn, _ = s.accept()
conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
for line in conn.makefile("rb"):
    argv = json.loads(line)
    code = 0
    if argv is not None:
        pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=[
            (os.POSIX_SPAWN_DUP2, null, 0), (os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)])
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    conn.sendall(b"%d\n" % code)
`;

export type AgentResult = { measured: true; ping: Summary; runTrue: Summary } | { measured: false; reason: string };

/** Request/response over one socket, one line each way. */
class LineClient {
  private buffered = '';
  private pending: { resolve: (line: string) => void; reject: (e: Error) => void } | undefined;
  private readonly socket: Socket;

  constructor(socket: Socket) {
    this.socket = socket;
    socket.setNoDelay(true);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.buffered += chunk;
      const nl = this.buffered.indexOf('\n');
      if (nl < 0 || this.pending === undefined) return;
      const line = this.buffered.slice(0, nl);
      this.buffered = this.buffered.slice(nl + 1);
      const p = this.pending;
      this.pending = undefined;
      p.resolve(line);
    });
    const fail = (e: Error): void => {
      const p = this.pending;
      this.pending = undefined;
      p?.reject(e);
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('the agent closed the connection')));
  }

  request(body: unknown): Promise<string> {
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.socket.write(`${JSON.stringify(body)}\n`);
    });
  }

  close(): void {
    this.socket.destroy();
  }
}

function tryConnect(host: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port: AGENT_PORT });
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

async function connectWithRetry(host: string): Promise<Socket> {
  const deadline = performance.now() + CONNECT_DEADLINE_MS;
  for (;;) {
    try {
      return await tryConnect(host);
    } catch (e) {
      if (performance.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Start the agent in a bridge-networked container and time requests to it; failure to reach it is a result, not a fault. */
export async function measureAgent(container: Container, rounds: Rounds): Promise<AgentResult> {
  await container.putFiles('/opt/authbench-bench', { 'agent.py': AGENT_SOURCE });
  const address = await container.exec({
    cmd: ['python3', '-c', 'import socket; print(socket.gethostbyname(socket.gethostname()))'],
  });
  const ip = address.stdout.trim();
  if (address.exitCode !== 0 || !/^\d+\.\d+\.\d+\.\d+$/.test(ip)) {
    return { measured: false, reason: `no IPv4 address for the agent container (${address.stderr.trim() || ip || 'empty'})` };
  }
  const start = await container.exec({ cmd: ['sh', '-c', `python3 ${AGENT_PATH} >/dev/null 2>&1 </dev/null &`] });
  if (start.exitCode !== 0) return { measured: false, reason: `could not start the agent: ${start.stderr.trim()}` };

  let client: LineClient;
  try {
    client = new LineClient(await connectWithRetry(ip));
  } catch (e) {
    return { measured: false, reason: `host cannot reach the container at ${ip}:${AGENT_PORT} (${e instanceof Error ? e.message : String(e)})` };
  }
  try {
    const ping: number[] = [];
    const runTrue: number[] = [];
    // Round trips this short are cheap: many more of them steady the median.
    const reps = rounds.reps * 10;
    for (let round = 0; round < rounds.warmup * 10 + reps; round++) {
      const keep = round >= rounds.warmup * 10;
      let t = performance.now();
      await client.request(null);
      const p = performance.now() - t;
      t = performance.now();
      const code = await client.request(['true']);
      const r = performance.now() - t;
      if (code !== '0') throw new AuthbenchError('INTERNAL', `the bench agent ran true with exit ${code}`);
      if (keep) {
        ping.push(p);
        runTrue.push(r);
      }
    }
    return { measured: true, ping: summarize(ping), runTrue: summarize(runTrue) };
  } finally {
    client.close();
  }
}
