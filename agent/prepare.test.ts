import { describe, expect, it } from 'vitest';
import { materializeArgv, writeSubtreeRoots } from './prepare.ts';

describe('writeSubtreeRoots', () => {
  it('takes the glob-free bases of recursive write entries, each once', () => {
    const policy = { write: ['/app/out/**', '/app/report.json', '/tmp/**', '/var/*/cache/**', '/**'] };
    const implicit = { write: ['/root/.cache/**', '/tmp/**', '/dev/null'] };
    expect(writeSubtreeRoots(policy, implicit)).toEqual(['/app/out', '/root/.cache', '/tmp']);
  });
});

describe('materializeArgv', () => {
  it('passes the directories as arguments, never inside the script', () => {
    const argv = materializeArgv(["/root/.cache", "/app/it's"]);
    expect(argv.slice(0, 2)).toEqual(['bash', '-c']);
    expect(argv.slice(3)).toEqual(['materialize', '/root/.cache', "/app/it's"]);
    expect(argv[2]).not.toContain('.cache');
  });
});
