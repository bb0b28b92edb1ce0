import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AuthbenchError } from '../../core/index.ts';
import {
  AGENT_PROTOCOL_VERSION,
  AGENT_WAKE_BYTE,
  decodeBackgroundReport,
  decodeFields,
  decodeHello,
  decodeResponse,
  encodeFrame,
  encodeListRequest,
  encodeRequest,
  encodeStopRequest,
  FRAME_TYPE,
  FrameDecoder,
  mainAgentEnded,
  TAG,
  type Field,
  type Frame,
} from './protocol.ts';

const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n, 0);
  return b;
};
const u64 = (n: number): Buffer => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n), 0);
  return b;
};
const field = (tag: number, value: Buffer | string): Field => ({ tag, value: Buffer.from(value) });

function doneFrame(extra: Field[] = [], outcome: Field = field(TAG.exit, u32(0))): Frame {
  return {
    type: FRAME_TYPE.done,
    fields: [
      outcome,
      field(TAG.stdout, 'out'),
      field(TAG.stdoutBytes, u64(3)),
      field(TAG.stderr, ''),
      field(TAG.stderrBytes, u64(0)),
      field(TAG.durationUs, u64(1500)),
      ...extra,
    ],
  };
}

function decodeAll(bytes: Buffer, cut: number, decoder = new FrameDecoder()): Frame[] {
  const out: Frame[] = [];
  for (let i = 0; i < bytes.length; i += cut) out.push(...decoder.push(bytes.subarray(i, i + cut)));
  expect(decoder.pendingBytes).toBe(0);
  return out;
}

describe('frame encoding', () => {
  it('lays out [u32 length][type][tag u32-length value]…', () => {
    const bytes = encodeFrame({ type: FRAME_TYPE.hello, fields: [field(TAG.version, u32(1))] });
    expect([...bytes]).toEqual([0, 0, 0, 10, 0x48, TAG.version, 0, 0, 0, 4, 0, 0, 0, 1]);
  });

  it('reassembles frames cut at every possible boundary', () => {
    const frames: Frame[] = [
      { type: FRAME_TYPE.hello, fields: [field(TAG.version, u32(1)), field(TAG.pid, u32(42))] },
      doneFrame([field(TAG.file, Buffer.from([1, 0, 0xff, 0x0a]))]),
      { type: FRAME_TYPE.error, fields: [] },
    ];
    const bytes = Buffer.concat(frames.map(encodeFrame));
    for (const cut of [1, 2, 3, 4, 5, 6, 7, 13, 64, bytes.length]) {
      const got = decodeAll(bytes, cut);
      expect(got.map((f) => f.type)).toEqual(frames.map((f) => f.type));
      expect(got.map((f) => f.fields.map((x) => [x.tag, x.value.toString('hex')]))).toEqual(
        frames.map((f) => f.fields.map((x) => [x.tag, x.value.toString('hex')])),
      );
    }
  });

  it('carries a large binary payload intact, split into many chunks', () => {
    const payload = Buffer.alloc(5 * 1024 * 1024 + 3);
    for (let i = 0; i < payload.length; i++) payload[i] = (i * 7919) & 0xff;
    const bytes = encodeFrame(doneFrame([field(TAG.file, Buffer.concat([Buffer.from([1]), payload]))]));
    const [frame] = decodeAll(bytes, 65_536);
    const response = decodeResponse(frame!);
    const file = response.files[0];
    expect(file?.present).toBe(true);
    expect(file?.present === true && file.content.equals(payload)).toBe(true);
  });

  it('holds back a partial frame until the rest arrives', () => {
    const bytes = encodeFrame(doneFrame());
    const d = new FrameDecoder();
    expect(d.push(bytes.subarray(0, bytes.length - 1))).toEqual([]);
    expect(d.pendingBytes).toBe(bytes.length - 1);
    expect(d.push(bytes.subarray(bytes.length - 1))).toHaveLength(1);
    expect(d.pendingBytes).toBe(0);
  });
});

describe('malformed frames', () => {
  const cases: [string, Buffer, RegExp][] = [
    ['zero length', Buffer.from([0, 0, 0, 0, 0x44]), /length 0/],
    ['unknown type', Buffer.from([0, 0, 0, 1, 0x5a]), /unknown frame type 0x5a/],
    ['over the limit', Buffer.concat([u32(1025), Buffer.from([0x44])]), /exceeds the 1024-byte limit/],
    ['field header cut', Buffer.concat([u32(4), Buffer.from([0x44, TAG.stdout, 0, 0])]), /truncated field header/],
    ['field overruns', Buffer.concat([u32(7), Buffer.from([0x44, TAG.stdout, 0, 0, 0, 9, 0x61])]), /overruns its frame/],
  ];
  it.each(cases)('%s throws a SANDBOX_UNAVAILABLE protocol error', (_name, bytes, message) => {
    const d = new FrameDecoder(1024);
    let error: unknown;
    try {
      d.push(bytes);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AuthbenchError);
    expect((error as AuthbenchError).code).toBe('SANDBOX_UNAVAILABLE');
    expect((error as AuthbenchError).message).toMatch(message);
  });

  it('stays broken once framing is lost', () => {
    const d = new FrameDecoder();
    expect(() => d.push(Buffer.from([0, 0, 0, 0, 0x44]))).toThrow(/length 0/);
    expect(() => d.push(encodeFrame(doneFrame()))).toThrow(/length 0/);
  });

  it('decodeFields rejects a field longer than its body', () => {
    expect(() => decodeFields(Buffer.from([TAG.argv, 0, 0, 0, 2, 0x61]))).toThrow(/overruns/);
  });
});

describe('requests', () => {
  it('encodes every part of a request as fields in order', () => {
    const bytes = encodeRequest({
      argv: ['sh', '-c', 'echo hi'],
      cwd: '/app',
      env: { A: '1', B: 'x=y' },
      stdin: 'in',
      timeoutMs: 1500.2,
      outputCapBytes: 4096,
      puts: [{ path: '/opt/run/1/rules', content: 'authbench-rules 1\n' }],
      collect: ['/opt/run/1/report.json', '/opt/run/1/trace'],
    });
    const [frame] = new FrameDecoder().push(bytes);
    expect(frame?.type).toBe(FRAME_TYPE.run);
    const fields = frame!.fields.map((f) => [f.tag, f.tag === TAG.timeoutMs || f.tag === TAG.outputCap ? f.value.readUInt32BE(0) : f.value.toString('utf8')]);
    expect(fields).toEqual([
      [TAG.argv, 'sh'],
      [TAG.argv, '-c'],
      [TAG.argv, 'echo hi'],
      [TAG.env, 'A=1'],
      [TAG.env, 'B=x=y'],
      [TAG.cwd, '/app'],
      [TAG.stdin, 'in'],
      [TAG.timeoutMs, 1501],
      [TAG.outputCap, 4096],
      [TAG.put, '/opt/run/1/rules\0authbench-rules 1\n'],
      [TAG.collect, '/opt/run/1/report.json'],
      [TAG.collect, '/opt/run/1/trace'],
    ]);
  });

  it('encodes the wrappers’ descriptors: trace cap, channel, rules, cpu', () => {
    const [frame] = new FrameDecoder().push(encodeRequest({ argv: ['true'], outputCapBytes: 1, traceCapBytes: 1024, channel: true, rules: 'authbench-rules 1\n', cpu: 1 }));
    const byTag = new Map(frame!.fields.map((f) => [f.tag, f.value]));
    expect(byTag.get(TAG.traceCap)?.readUInt32BE(0)).toBe(1024);
    expect(byTag.get(TAG.channel)?.length).toBe(0);
    expect(byTag.get(TAG.rules)?.toString()).toBe('authbench-rules 1\n');
    expect(byTag.get(TAG.cpu)?.readUInt32BE(0)).toBe(1);
    expect(() => encodeRequest({ argv: ['true'], outputCapBytes: 1, traceCapBytes: 0 })).toThrow(/trace cap/);
  });

  it('encodes a listing request as a list frame of roots', () => {
    const [frame] = new FrameDecoder().push(encodeListRequest(['/', '/dev']));
    expect(frame?.type).toBe(FRAME_TYPE.list);
    expect(frame?.fields.map((f) => f.value.toString())).toEqual(['/', '/dev']);
    expect(() => encodeListRequest([])).toThrow(/no roots/);
  });

  it('refuses what the agent could not represent', () => {
    expect(() => encodeRequest({ argv: [], outputCapBytes: 1 })).toThrow(/empty argv/);
    expect(() => encodeRequest({ argv: ['a\0b'], outputCapBytes: 1 })).toThrow(/NUL byte/);
    expect(() => encodeRequest({ argv: ['true'], env: { 'A=B': '1' }, outputCapBytes: 1 })).toThrow(/not valid/);
    expect(() => encodeRequest({ argv: ['true'], timeoutMs: 0, outputCapBytes: 1 })).toThrow(/positive/);
    expect(() => encodeRequest({ argv: ['true'], puts: [{ path: 'rel', content: '' }], outputCapBytes: 1 })).toThrow(/absolute/);
  });
});

describe('responses', () => {
  it('decodes a done frame with exit code, output, byte counts and files', () => {
    const r = decodeResponse(doneFrame([field(TAG.file, Buffer.from([1, 0x7b, 0x7d])), field(TAG.file, Buffer.from('\0No such file or directory'))]));
    expect(r.outcome).toEqual({ kind: 'exited', code: 0 });
    expect(r.stdout.toString()).toBe('out');
    expect([r.stdoutBytes, r.stderrBytes, r.durationUs]).toEqual([3, 0, 1500]);
    expect(r.files).toEqual([
      { present: true, content: Buffer.from('{}') },
      { present: false, reason: 'No such file or directory' },
    ]);
  });

  it('decodes the trace, the launcher’s channel messages, seccomp denials, leftovers and a spawn error', () => {
    const denial = Buffer.alloc(64);
    denial.writeBigUInt64BE(1_700_000_000_123_456n, 0);
    denial.writeUInt32BE(42, 8);
    denial.writeUInt32BE(41, 12);
    denial.writeBigUInt64BE(17n, 16);
    denial.writeBigUInt64BE(3n, 24);
    const r = decodeResponse(
      doneFrame([
        field(TAG.mainPid, u32(9)),
        field(TAG.trace, 'abc'),
        field(TAG.traceBytes, u64(10)),
        field(TAG.channelMsg, 'R{}'),
        field(TAG.channelMsg, 'X127 exec x: No such file or directory'),
        field(TAG.denial, denial),
        field(TAG.denialsTotal, u64(5)),
        field(TAG.leftover, u32(2)),
        field(TAG.leftoverInfo, '60 sleep\n61 sh'),
        field(TAG.spawnError, 'chdir No such file or directory'),
      ]),
    );
    expect(r.mainPid).toBe(9);
    expect(r.trace).toEqual({ kept: Buffer.from('abc'), bytes: 10 });
    expect(r.channelMessages.map((m) => m.toString())).toEqual(['R{}', 'X127 exec x: No such file or directory']);
    expect(r.denials).toEqual([{ time: 1_700_000_000.123456, pid: 42, nr: 41, args: [17n, 3n, 0n, 0n, 0n, 0n] }]);
    expect(r.denialsTotal).toBe(5);
    expect([r.leftover, r.leftoverInfo, r.spawnError]).toEqual([2, '60 sleep\n61 sh', 'chdir No such file or directory']);
    expect(() => decodeResponse(doneFrame([field(TAG.trace, 'abc')]))).toThrow(/half a trace/);
    expect(() => decodeResponse(doneFrame([field(TAG.trace, 'abcd'), field(TAG.traceBytes, u64(3))]))).toThrow(/more trace/);
    expect(() => decodeResponse(doneFrame([field(TAG.denial, Buffer.alloc(8))]))).toThrow(/64 bytes/);
  });

  it('decodes survivors apart from leftovers, and reads none when the agent sends none', () => {
    const r = decodeResponse(doneFrame([field(TAG.survivors, u32(2)), field(TAG.survivorInfo, '41 nginx\n42 nginx'), field(TAG.leftover, u32(1)), field(TAG.leftoverInfo, '50 sh')]));
    expect([r.survivors, r.survivorInfo, r.leftover, r.leftoverInfo]).toEqual([2, '41 nginx\n42 nginx', 1, '50 sh']);
    const none = decodeResponse(doneFrame([]));
    expect([none.survivors, none.survivorInfo]).toEqual([0, '']);
    expect(() => decodeResponse(doneFrame([field(TAG.survivors, u64(2))]))).toThrow(/should be 4 bytes/);
  });

  it('reads signal and timeout outcomes', () => {
    expect(decodeResponse(doneFrame([], field(TAG.signal, u32(9)))).outcome).toEqual({ kind: 'signaled', signal: 9 });
    expect(decodeResponse(doneFrame([], field(TAG.timedOut, ''))).outcome).toEqual({ kind: 'timedOut' });
  });

  it('reads a cut by the host as a timeout that says so, and nothing of it otherwise', () => {
    const cut = decodeResponse(doneFrame([field(TAG.cut, '')], field(TAG.timedOut, '')));
    expect(cut.outcome).toEqual({ kind: 'timedOut' });
    expect(cut.cut).toBe(true);
    expect(decodeResponse(doneFrame([], field(TAG.timedOut, '')))).not.toHaveProperty('cut');
    expect(decodeResponse(doneFrame())).not.toHaveProperty('cut');
  });

  it('rejects a malformed cut: with a value, twice, or on a command that was not stopped', () => {
    expect(() => decodeResponse(doneFrame([field(TAG.cut, 'x')], field(TAG.timedOut, '')))).toThrow(/cut field should be empty/);
    expect(() => decodeResponse(doneFrame([field(TAG.cut, ''), field(TAG.cut, '')], field(TAG.timedOut, '')))).toThrow(/cut twice/);
    expect(() => decodeResponse(doneFrame([field(TAG.cut, '')]))).toThrow(/cut but not that it was stopped/);
    expect(() => decodeResponse(doneFrame([field(TAG.cut, '')], field(TAG.signal, u32(9))))).toThrow(/cut but not that it was stopped/);
  });

  it('turns an error frame into the agent’s message', () => {
    expect(() => decodeResponse({ type: FRAME_TYPE.error, fields: [field(TAG.message, 'cannot write /x: Permission denied')] })).toThrow(
      /refused the request: cannot write \/x: Permission denied/,
    );
  });

  it('rejects incomplete or contradictory done frames', () => {
    expect(() => decodeResponse({ type: FRAME_TYPE.done, fields: [field(TAG.exit, u32(0))] })).toThrow(/lacks a required field/);
    expect(() => decodeResponse(doneFrame([field(TAG.signal, u32(9))]))).toThrow(/more than one outcome/);
    expect(() => decodeResponse(doneFrame([field(TAG.exit, Buffer.from([0]))]))).toThrow(/4 bytes/);
    expect(() => decodeResponse(doneFrame([field(99, '')]))).toThrow(/unknown field 99/);
    const lying = doneFrame();
    lying.fields[2] = field(TAG.stdoutBytes, u64(1));
    expect(() => decodeResponse(lying)).toThrow(/more output than was written/);
  });

  it('reads the hello', () => {
    expect(decodeHello({ type: FRAME_TYPE.hello, fields: [field(TAG.version, u32(1)), field(TAG.pid, u32(77))] })).toEqual({ version: 1, pid: 77, harnessPids: [] });
    expect(decodeHello({ type: FRAME_TYPE.hello, fields: [field(TAG.version, u32(2)), field(TAG.pid, u32(8)), field(TAG.pids, u32(1)), field(TAG.pids, u32(7))] })).toEqual({
      version: 2,
      pid: 8,
      harnessPids: [1, 7],
    });
    expect(() => decodeHello({ type: FRAME_TYPE.hello, fields: [] })).toThrow(/lacks/);
    expect(() => decodeHello(doneFrame())).toThrow(/expected a hello/);
  });
});

describe('background commands', () => {
  it('asks for survivors to be kept only when told, and says which background command kept them', () => {
    const fieldsOf = (keepBackground?: boolean): number[] =>
      new FrameDecoder().push(encodeRequest({ argv: ['sh'], outputCapBytes: 10, traceCapBytes: 100, ...(keepBackground === undefined ? {} : { keepBackground }) }))[0]?.fields.map((f) => f.tag) ?? [];
    expect(fieldsOf(true)).toContain(TAG.keepBackground);
    expect(fieldsOf(false)).not.toContain(TAG.keepBackground);
    expect(fieldsOf()).not.toContain(TAG.keepBackground);
    expect(decodeResponse(doneFrame([field(TAG.survivors, u32(1)), field(TAG.backgroundJob, u32(3))])).backgroundJob).toBe(3);
    expect(decodeResponse(doneFrame())).not.toHaveProperty('backgroundJob');
  });

  it('encodes the stop request as an empty S frame', () => {
    expect([...encodeStopRequest()]).toEqual([0, 0, 0, 1, FRAME_TYPE.stop]);
  });

  it('groups the stop answer per job and keeps the escaped processes apart', () => {
    const denial = Buffer.alloc(64);
    denial.writeUInt32BE(41, 8);
    const report = decodeBackgroundReport({
      type: FRAME_TYPE.background,
      fields: [
        field(TAG.leftover, u32(1)),
        field(TAG.leftoverInfo, '90 sh'),
        field(TAG.job, u32(1)),
        field(TAG.trace, 'a'),
        field(TAG.traceBytes, u64(5)),
        field(TAG.denial, denial),
        field(TAG.survivors, u32(2)),
        field(TAG.survivorInfo, '41 nginx\n42 nginx'),
        field(TAG.job, u32(2)),
        field(TAG.trace, ''),
        field(TAG.traceBytes, u64(0)),
      ],
    });
    expect([report.leftover, report.leftoverInfo]).toEqual([1, '90 sh']);
    expect(report.jobs.map((j) => [j.job, j.trace.kept.toString(), j.trace.bytes, j.denials.map((d) => d.pid), j.denialsTotal, j.stopped, j.stoppedInfo])).toEqual([
      [1, 'a', 5, [41], 1, 2, '41 nginx\n42 nginx'],
      [2, '', 0, [], 0, 0, ''],
    ]);
  });

  it('rejects a stop answer that is not one, or whose fields precede a job or lack a trace', () => {
    expect(() => decodeBackgroundReport(doneFrame())).toThrow(/expected a background frame/);
    expect(() => decodeBackgroundReport({ type: FRAME_TYPE.background, fields: [field(TAG.trace, 'x')] })).toThrow(/before the first job/);
    expect(() => decodeBackgroundReport({ type: FRAME_TYPE.background, fields: [field(TAG.job, u32(1))] })).toThrow(/carries no trace/);
    expect(() => decodeBackgroundReport({ type: FRAME_TYPE.background, fields: [field(TAG.job, u32(1)), field(TAG.trace, 'abc'), field(TAG.traceBytes, u64(1))] })).toThrow(
      /more trace than was written/,
    );
    expect(() => decodeBackgroundReport({ type: FRAME_TYPE.error, fields: [field(TAG.message, 'no')] })).toThrow(/refused the stop request: no/);
  });
});

describe('persistent shell calls', () => {
  const tagsOf = (shell?: { nonce: string; reset?: boolean }): Field[] =>
    new FrameDecoder().push(encodeRequest({ argv: ['bash'], outputCapBytes: 10, stdin: 'x', ...(shell === undefined ? {} : { shell }) }))[0]?.fields ?? [];

  it('carries the nonce only on shell calls, and the reset only when asked', () => {
    const nonce = '0123456789abcdef0123456789abcdef';
    expect(tagsOf({ nonce }).find((f) => f.tag === TAG.shell)?.value.toString()).toBe(nonce);
    expect(tagsOf({ nonce }).map((f) => f.tag)).not.toContain(TAG.shellReset);
    expect(tagsOf({ nonce, reset: true }).map((f) => f.tag)).toContain(TAG.shellReset);
    expect(tagsOf().map((f) => f.tag)).not.toContain(TAG.shell);
  });

  it('marks a host-traced call (the shell under a keeper), and refuses one without a trace cap', () => {
    const nonce = '0123456789abcdef0123456789abcdef';
    const tags = new FrameDecoder().push(encodeRequest({ argv: ['ab-launch', '--keep'], outputCapBytes: 10, traceCapBytes: 4096, hostTraced: true, shell: { nonce } }))[0]?.fields.map((f) => f.tag) ?? [];
    expect(tags).toEqual(expect.arrayContaining([TAG.hostTraced, TAG.shell]));
    expect(() => encodeRequest({ argv: ['ab-launch', '--keep'], outputCapBytes: 10, hostTraced: true, shell: { nonce } })).toThrow(AuthbenchError);
  });

  it('refuses a nonce the agent would not take (too short, upper case, not hex)', () => {
    for (const nonce of ['abc', '0123456789ABCDEF', 'z123456789abcdef', `${'a'.repeat(65)}`]) {
      expect(() => tagsOf({ nonce }), nonce).toThrow(AuthbenchError);
    }
  });

  it('decodes what happened to the shell, and nothing for other requests', () => {
    const r = decodeResponse(doneFrame([field(TAG.shellStarted, ''), field(TAG.shellForged, u32(2)), field(TAG.shellEnded, 'the shell exited with status 3')]));
    expect(r.shell).toEqual({ started: true, forged: 2, ended: 'the shell exited with status 3', notRun: false });
    expect(decodeResponse(doneFrame([field(TAG.shellNotRun, '')])).shell).toEqual({ started: false, forged: 0, notRun: true });
    expect(decodeResponse(doneFrame())).not.toHaveProperty('shell');
  });
});

describe('the C agent mirrors these constants', () => {
  const source = readFileSync(new URL('./ab-serve.c', import.meta.url), 'utf8');
  const cName = (name: string): string => `T_${name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;

  it('uses the same tag numbers, frame types and version', () => {
    for (const [name, value] of Object.entries(TAG)) {
      const m = new RegExp(`\\b${cName(name)} = (\\d+)`).exec(source);
      expect(m?.[1], cName(name)).toBe(String(value));
    }
    for (const [name, value] of Object.entries(FRAME_TYPE)) {
      const m = new RegExp(`\\bF_${name.toUpperCase()} = '(.)'`).exec(source);
      expect(m?.[1]?.charCodeAt(0), `F_${name}`).toBe(value);
    }
    expect(new RegExp(`#define PROTOCOL_VERSION ${AGENT_PROTOCOL_VERSION}\\b`).test(source)).toBe(true);
  });
});

describe('the main process’s agent (ab-launch --idle --serve-stdin)', () => {
  const launch = readFileSync(new URL('./ab-launch.c', import.meta.url), 'utf8');
  const serve = readFileSync(new URL('./ab-serve.c', import.meta.url), 'utf8');

  it('reads the line the main process writes when its agent ended, as Docker would report the code', () => {
    const prefix = /#define IDLE_AGENT_ENDED "([^"]+)"/.exec(launch)?.[1];
    expect(prefix).toBe('ab-launch --idle: the session agent ended');
    expect(mainAgentEnded(`${prefix} (exit 0)`)).toBe(0);
    expect(mainAgentEnded(`${prefix} (exit 143)`)).toBe(143);
    expect(mainAgentEnded(`${prefix} (signal 9)`)).toBe(137);
  });

  it('takes no other line for it: not a prefix, not text around it, not another number', () => {
    for (const line of [
      'ab-launch --idle: the session agent ended',
      'x ab-launch --idle: the session agent ended (exit 0)',
      'ab-launch --idle: the session agent ended (exit 0) ',
      'ab-launch --idle: the session agent ended (exit -1)',
      'ab-launch --idle: the session agent ended (core 1)',
      'ab-agent: request stream cut mid-frame',
    ])
      expect(mainAgentEnded(line)).toBeUndefined();
  });

  it('mirrors the wake byte in ab-serve.c', () => {
    expect(Number(/#define WAKE_BYTE (0x[0-9a-fA-F]+)/.exec(serve)?.[1])).toBe(AGENT_WAKE_BYTE);
  });
});
