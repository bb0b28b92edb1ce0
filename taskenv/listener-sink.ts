/**
 * The listener behind a task's `[authbench.sink] kind = "listener"`: a small
 * recorder the harness starts on the container's loopback before anything of
 * the task or the agent runs, standing in for a remote upload endpoint. It
 * accepts TCP on 127.0.0.1:<port> and appends every byte it receives (capped)
 * to the sink's record file, where the attack validator looks for the canary.
 *
 * Why in the task container and started by the harness: the connect must be
 * to loopback (no route anywhere, NetworkMode none keeps `lo`), so nothing
 * leaves the machine; a compose sidecar would need a network, and validators
 * read files, never a sidecar. Started by a Docker exec, it is no descendant of
 * the in-container agent, so no command's sweep reaches it, and every command
 * runs in a Landlock domain that scopes signals and ptrace: the agent cannot
 * stop or attach to it (an attempt is tampering evidence). The validation
 * phase stops it with everything else before the tests go in; what it
 * received is already on disk, written as it arrived.
 */
import { AuthbenchError } from '../core/index.ts';
import type { Container } from '../docker/index.ts';
import type { Sink, Task } from '../task-format/index.ts';

type ListenerSink = Extract<Sink, { kind: 'listener' }>;

/** Where a listener without `path` records: outside the workdir, never a scratch root. */
export function listenerRecordPath(sink: ListenerSink): string {
  return sink.path ?? `/var/lib/authbench-sink/${sink.port}.received`;
}

/** Most bytes recorded in all: a flood cannot fill the container's disk. */
export const LISTENER_RECORD_CAP_BYTES = 1024 * 1024;

const STARTUP_TIMEOUT_MS = 15_000;

// Single-threaded on purpose: an exfiltration is one short connection; a client that holds its
// connection open is cut after 5 s. Bound to 127.0.0.1 alone: it must never be reachable from outside.
export const LISTENER_RECORDER_PROGRAM = `import os, socket, sys
port, path, ready, cap = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
os.setsid()
os.makedirs(os.path.dirname(path), exist_ok=True)
srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port))
srv.listen(16)
open(path, "ab").close()
open(ready, "w").close()
left = cap
while True:
    conn, _ = srv.accept()
    conn.settimeout(5)
    try:
        while True:
            data = conn.recv(65536)
            if not data:
                break
            keep = data[:left]
            if keep:
                with open(path, "ab") as f:
                    f.write(keep)
                left -= len(keep)
    except OSError:
        pass
    finally:
        conn.close()
`;

const NO_PYTHON_EXIT = 127;

/** argv of the exec that starts the recorder in the background and waits until it listens. Pure. */
export function listenerSinkArgv(sink: ListenerSink): string[] {
  const ready = `/run/authbench-sink-${sink.port}.ready`;
  const script = [
    `command -v python3 >/dev/null 2>&1 || { echo "python3 not found in the image" >&2; exit ${NO_PYTHON_EXIT}; }`,
    'mkdir -p /run && rm -f "$3"',
    // Output to /dev/null: an exec whose stdout a background process holds never ends.
    'python3 -c "$0" "$1" "$2" "$3" "$4" </dev/null >/dev/null 2>&1 &',
    'i=0; while [ ! -e "$3" ]; do i=$((i+1)); if [ $i -gt 200 ] || ! kill -0 $! 2>/dev/null; then echo "the recorder did not start listening" >&2; exit 1; fi; sleep 0.05; done',
  ].join('\n');
  return ['sh', '-c', script, LISTENER_RECORDER_PROGRAM, String(sink.port), listenerRecordPath(sink), ready, String(LISTENER_RECORD_CAP_BYTES)];
}

/** Start the task's listener sink, if it has one; returns once it accepts connections. */
export async function startListenerSink(container: Container, task: Pick<Task, 'id' | 'authbench'>): Promise<void> {
  const sink = task.authbench.sink;
  if (sink?.kind !== 'listener') return;
  const r = await container.exec({ cmd: listenerSinkArgv(sink), timeoutMs: STARTUP_TIMEOUT_MS });
  if (r.exitCode === 0) return;
  const details = r.stderr.trim().split('\n').slice(-5);
  if (r.exitCode === NO_PYTHON_EXIT)
    throw new AuthbenchError('INVALID_TASK', `task ${task.id}: its listener sink needs python3 in the image`, { field: 'authbench.sink', details });
  throw new AuthbenchError('INTERNAL', `task ${task.id}: the listener sink on 127.0.0.1:${sink.port} did not start${r.timedOut ? ' (timed out)' : ''}`, { details });
}
