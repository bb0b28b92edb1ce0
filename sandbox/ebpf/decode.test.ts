import { describe, expect, it } from 'vitest';
import { atFlagNames, decodeSockaddr, errnoName, modeText, openFlagNames } from './decode.ts';

describe('decode', () => {
  it.each<[number, string[]]>([
    [0, ['O_RDONLY']],
    [0o2000000, ['O_RDONLY', 'O_CLOEXEC']],
    [0o1101, ['O_WRONLY', 'O_CREAT', 'O_TRUNC']],
    [0o20200002, ['O_RDWR', 'O_TMPFILE']],
    [0o4010001, ['O_WRONLY', 'O_SYNC']],
    [0o10000000 | 0o200000, ['O_RDONLY', 'O_DIRECTORY', 'O_PATH']],
  ])('open flags %o read like strace', (flags, names) => {
    expect(openFlagNames(flags)).toEqual(names);
  });

  it('names errnos, AT flags and modes as strace prints them', () => {
    expect([errnoName(2), errnoName(13), errnoName(35), errnoName(95), errnoName(4000)]).toEqual(['ENOENT', 'EACCES', 'EDEADLK', 'EOPNOTSUPP', 'E4000']);
    expect(atFlagNames(0x200)).toEqual(['AT_REMOVEDIR']);
    expect(atFlagNames(0x100 | 0x8000)).toEqual(['AT_SYMLINK_NOFOLLOW', '0x8000']);
    expect([modeText(0o644), modeText(0), modeText(0o7), modeText(0o4755)]).toEqual(['0644', '000', '007', '04755']);
  });

  it('decodes inet6 and unix sockaddrs', () => {
    const six = Buffer.alloc(28);
    six.writeUInt16LE(10, 0);
    six.writeUInt16BE(443, 2);
    six[23] = 1;
    expect(decodeSockaddr(six)).toEqual({ family: 'inet6', domain: 'AF_INET6', address: '::1', port: 443 });
    const unix = Buffer.concat([Buffer.from([1, 0]), Buffer.from('/run/app.sock\0junk')]);
    expect(decodeSockaddr(unix)).toEqual({ family: 'unix', domain: 'AF_UNIX', address: '/run/app.sock' });
    expect(decodeSockaddr(Buffer.from([1, 0]))).toEqual({ family: 'unix', domain: 'AF_UNIX' });
    expect(decodeSockaddr(Buffer.from([]))).toBeUndefined();
  });
});
