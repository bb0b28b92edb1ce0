export { straceArgv, STRACE_STRING_LIMIT, TRACED_SYSCALLS, type StraceArgvOptions } from './argv.ts';
export { StraceParser, parseStrace, type StraceParserOptions } from './parser.ts';
export { normalizeAbsolute, openOp } from './syscalls.ts';
export {
  TRACE_EVENT_SCHEMA_VERSION,
  FILE_OPS,
  FILE_OP_AXIS,
  isWriteOp,
  NETWORK_OPS,
  PROCESS_OPS,
  SOCKET_FAMILIES,
  TraceEventSchema,
  ExecEventSchema,
  FileEventSchema,
  NetworkEventSchema,
  ProcessEventSchema,
  SeccompEventSchema,
  UnparsedEventSchema,
  isDenial,
  renderEvent,
  type TraceEvent,
  type TraceEventKind,
  type ExecEvent,
  type FileEvent,
  type FileOp,
  type WriteFileOp,
  type NetworkEvent,
  type NetworkOp,
  type SocketFamily,
  type ProcessEvent,
  type SeccompEvent,
  type UnparsedEvent,
} from './events.ts';
export { FILTERED_SYSCALLS, seccompEvent, type SeccompRecord } from './seccomp.ts';
