import { describe, expect, it } from 'vitest';
import { parseSockaddr } from './sockaddr.ts';
import { fdArg, parseResult, readQuoted, splitArgs, stringArray, structField, unescapeStrace } from './syntax.ts';

describe('unescapeStrace', () => {
  it.each([
    ['plain', 'plain'],
    ['a\\nb\\tc', 'a\nb\tc'],
    ['q\\"q\\\\', 'q"q\\'],
    ['caf\\303\\251', 'café'],
    ['\\342\\202\\254', '€'],
    ['a b\\76c\\74', 'a b>c<'],
    ['\\0', '\0'],
    ['\\0001', '\x001'],
    ['\\x41\\xc3\\xa9', 'Aé'],
    ['\\377', '\uFFFD'],
    ['😀', '😀'],
  ])('%s', (raw, want) => expect(unescapeStrace(raw)).toBe(want));
});

describe('readQuoted', () => {
  it('reads a string and reports where it ends', () => {
    expect(readQuoted('"a\\"b", 1', 0)).toEqual({ value: 'a"b', end: 6, truncated: false });
  });
  it('notices strace truncation', () => {
    expect(readQuoted('"abc"..., x', 0)).toEqual({ value: 'abc', end: 8, truncated: true });
  });
  it('rejects non-strings and unterminated strings', () => {
    expect(readQuoted('NULL', 0)).toBeUndefined();
    expect(readQuoted('"abc', 0)).toBeUndefined();
  });
});

describe('splitArgs', () => {
  it('keeps strings, decorations and nested structures whole', () => {
    const text = 'f(AT_FDCWD</a, b>, "x, y)", {a=1, b=[2, 3]}, htons(80), 3</p\\76q>) = 0';
    expect(splitArgs(text, 2)).toEqual({
      args: ['AT_FDCWD</a, b>', '"x, y)"', '{a=1, b=[2, 3]}', 'htons(80)', '3</p\\76q>'],
      end: text.indexOf(') = 0'),
    });
  });
  it('handles no arguments and a missing close', () => {
    expect(splitArgs('vfork() = 3', 6)).toEqual({ args: [], end: 6 });
    expect(splitArgs('open("/x", O_RDONLY', 5).end).toBe(-1);
  });
});

describe('fdArg', () => {
  it.each([
    ['AT_FDCWD', { fd: 'AT_FDCWD' }],
    ['AT_FDCWD</app/d\\76\\74\\303\\251\\"\\n x>', { fd: 'AT_FDCWD', decoration: '/app/d><é"\n x' }],
    ['3</tmp/x (deleted)>', { fd: '3', decoration: '/tmp/x' }],
    ['4</memfd:mem>(deleted)', { fd: '4', decoration: '/memfd:mem' }],
    ['5<socket:[34918]>', { fd: '5', decoration: 'socket:[34918]' }],
    ['"str"', undefined],
  ])('%s', (raw, want) => expect(fdArg(raw)).toEqual(want));
});

describe('parseResult', () => {
  it.each([
    [' = 0', { value: 0 }],
    ['   = ?', { value: null }],
    [' = 3</app/a b\\76c>', { value: 3, decoration: '/app/a b>c' }],
    [' = 4</memfd:mem>(deleted)', { value: 4, decoration: '/memfd:mem' }],
    [' = -1 EACCES (Permission denied)', { value: -1, errno: 'EACCES' }],
    [' = ? ERESTARTSYS (To be restarted if SA_RESTART is set)', { value: null, errno: 'ERESTARTSYS' }],
    [' = 0 (Timeout)', { value: 0 }],
    [' = 0x10', { value: 16 }],
  ])('%s', (tail, want) => expect(parseResult(tail)).toEqual(want));
  it('rejects a tail without a result', () => expect(parseResult(' garbage')).toBeUndefined());
});

describe('stringArray', () => {
  it('reads argv, including truncation markers', () => {
    expect(stringArray('["sh", "-c", "echo \\"hi\\""]')).toEqual({ values: ['sh', '-c', 'echo "hi"'], truncated: false });
    expect(stringArray('["sh", "-c", "long"...]')).toEqual({ values: ['sh', '-c', 'long'], truncated: true });
    expect(stringArray('["a", ...]')).toEqual({ values: ['a'], truncated: true });
    expect(stringArray('[]')).toEqual({ values: [], truncated: false });
  });
  it('gives up on pointers', () => expect(stringArray('0x7ffc0d0a6048')).toBeUndefined());
});

describe('structField', () => {
  it('finds a top-level field', () => {
    const how = '{flags=O_RDONLY|O_CLOEXEC, mode=0, resolve=RESOLVE_BENEATH}';
    expect(structField(how, 'flags')).toBe('O_RDONLY|O_CLOEXEC');
    expect(structField(how, 'resolve')).toBe('RESOLVE_BENEATH');
    expect(structField(how, 'nope')).toBeUndefined();
  });
});

describe('parseSockaddr', () => {
  it.each([
    ['{sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr("127.0.0.1")}', { family: 'inet', domain: 'AF_INET', address: '127.0.0.1', port: 80 }],
    [
      '{sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "::1", &sin6_addr), sin6_scope_id=0}',
      { family: 'inet6', domain: 'AF_INET6', address: '::1', port: 443 },
    ],
    ['{sa_family=AF_UNIX, sun_path="/run/x.sock"}', { family: 'unix', domain: 'AF_UNIX', address: '/run/x.sock' }],
    ['{sa_family=AF_UNIX, sun_path=@"abstract\\0"}', { family: 'unix', domain: 'AF_UNIX', address: '@abstract\0' }],
    ['{sa_family=AF_UNIX}', { family: 'unix', domain: 'AF_UNIX' }],
    ['{sa_family=AF_NETLINK, nl_pid=0, nl_groups=00000000}', { family: 'netlink', domain: 'AF_NETLINK', address: 'nl_pid=0, nl_groups=00000000' }],
    ['{sa_family=AF_PACKET, sll_protocol=htons(ETH_P_ALL), sll_ifindex=if_nametoindex("eth0")}', { family: 'packet', domain: 'AF_PACKET', address: 'sll_protocol=htons(ETH_P_ALL), sll_ifindex=if_nametoindex("eth0")' }],
    ['{sa_family=AF_UNSPEC, sa_data="\\0\\0"}', { family: 'other', domain: 'AF_UNSPEC', address: 'sa_data="\\0\\0"' }],
  ])('%s', (raw, want) => expect(parseSockaddr(raw)).toEqual(want));
  it('rejects a struct without sa_family', () => expect(parseSockaddr('{x=1}')).toBeUndefined());
});
