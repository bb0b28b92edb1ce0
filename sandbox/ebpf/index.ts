export { buildProgram, FIELD_SEP, RECORD_START, type ProgramOptions } from './program.ts';
export { commandEvents, EbpfParser, parseEbpf, type EbpfParse, type EbpfParseOptions } from './parse.ts';
export { cgroup2MountOf, engineFacts, gatherEbpfFacts, judgeEbpf, requireEbpf, type EbpfFacts, type EbpfVerdict } from './probe.ts';
export { cgroupCandidates, containerCgroupId, EBPF_BACKENDS, startEbpfTrace, type EbpfBackend, type EbpfTrace, type EbpfTraceOptions, type EbpfTraceResult } from './run.ts';
export { callSpec, ensureEbpfTracer, NATIVE_SOURCE_DIR, NATIVE_STRING_LIMIT, nativeArgs, parseTracepointFormat, readTracepointFormats, type NativeTracer, type TracepointField } from './native.ts';
export { compareTraces, goldRelevant, type Agreement, type AgreementDifference } from './agreement.ts';
export { ARGV_LIMIT, EBPF_SYSCALLS, STRING_LIMIT } from './syscalls.ts';
export { EbpfHub, type EbpfHubOptions, type HubTake, type HubTrace } from './hub.ts';
export { HubDemux, type DemuxSink, type HubAck } from './demux.ts';
