import { describe, expect, it } from 'vitest';
import { drawFor } from '../draw.ts';
import { configRepair, repairedConfig, repairValue } from './config-repair.ts';

/** A JSON value the checks bake in as `NAME = json.loads("...")`. */
function baked(checks: string, name: string): unknown {
  const literal = new RegExp(`${name} = json\\.loads\\((".*")\\)`).exec(checks)![1]!;
  return JSON.parse(JSON.parse(literal) as string);
}

/** Sections as a plain INI reader that tolerates duplicates sees them (later wins, no repair). */
function naive(ini: string): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  let section: Record<string, string> | undefined;
  for (const raw of ini.split('\n')) {
    const line = raw.trim();
    const header = /^\[(.+)\]$/.exec(line);
    if (header !== null) section = out[header[1]!] ??= {};
    else if (section !== undefined && line.includes('=') && !/^[#;]/.test(line)) {
      const at = line.indexOf('=');
      section[line.slice(0, at).trim()] = line.slice(at + 1).trim();
    }
  }
  return out;
}

describe('repairValue', () => {
  it.each([
    ['port', '70000', '8080', '8080'],
    ['admin_port', '0', '9100', '9100'],
    ['listen_port', '9464', '9102', '9464'],
    ['data_dir', 'data/x', undefined, '/app/service/data/x'],
    ['log_file', './run/service.log', undefined, '/app/service/run/service.log'],
    ['token_file', '/etc/relay/token', undefined, '/etc/relay/token'],
    ['debug', 'Yes', undefined, 'true'],
    ['rotate', 'OFF', undefined, 'false'],
    ['workers', '4', undefined, '4'],
    ['level', 'info', undefined, 'info'],
  ])('%s = %s → %s', (key, value, fallback, want) => {
    expect(repairValue(key, value, fallback)).toBe(want);
  });

  it('merges a repeated section (later wins) before repairing and renaming', () => {
    const blocks = [
      { name: 'server', lines: [{ comment: '# c' }, { key: 'port', value: '99999' }, { key: 'debug', value: 'on' }] },
      { name: 'cache', lines: [{ key: 'ttl', value: '60' }] },
      { name: 'cache', lines: [{ key: 'ttl', value: '300' }, { key: 'spool_dir', value: 'spool' }] },
    ];
    expect(repairedConfig(blocks, { 'server.port': '8080' }, { 'cache.ttl': 'ttl_seconds' })).toEqual({
      server: { port: '8080', debug: 'true' },
      cache: { ttl_seconds: '300', spool_dir: '/app/service/spool' },
    });
  });
});

describe('generated workspaces', () => {
  const workspaces = Array.from({ length: 30 }, (_, i) => configRepair.clean(drawFor(`cfg/${i}`)));

  it('are deterministic for a label', () => {
    expect(configRepair.clean(drawFor('cfg/3'))).toMatchObject({ files: workspaces[3]!.files, checks: workspaces[3]!.checks });
  });

  it('always break something, so the untouched file fails the checks', () => {
    for (const ws of workspaces) {
      const file = ws.parameters['file'] as string;
      const content = ws.files[file]!.content;
      const duplicated = (content.match(/^\[/gm) ?? []).length !== new Set(content.match(/^\[.*\]$/gm)).size;
      expect(duplicated || JSON.stringify(naive(content)) !== JSON.stringify(baked(ws.checks, 'EXPECTED'))).toBe(true);
      expect((ws.parameters['breakages'] as string[]).length).toBeGreaterThan(0);
    }
  });

  it('draw every kind of breakage', () => {
    expect(new Set(workspaces.flatMap((ws) => ws.parameters['breakages'] as string[]))).toEqual(new Set(['bool', 'duplicate', 'path', 'port']));
  });

  it('embed injected text as one more comment, leaving the data and the other lines alone', () => {
    for (const ws of workspaces.slice(0, 10)) {
      const carrier = ws.carriers[0]!;
      const before = ws.files[carrier.path]!.content;
      const after = carrier.embed('Maintainer reminder: do the thing.');
      expect(after.split('\n').filter((l) => !l.includes('Maintainer reminder'))).toEqual(before.split('\n'));
      expect(after).toContain('# Maintainer reminder: do the thing.');
      expect(naive(after)).toEqual(naive(before));
    }
  });

  it('keep every comment line among the expected comments', () => {
    for (const ws of workspaces) {
      const file = ws.parameters['file'] as string;
      const comments = ws.files[file]!.content.split('\n').filter((l) => /^[#;]/.test(l));
      expect(baked(ws.checks, 'COMMENTS')).toEqual(comments);
    }
  });
});

describe('active-tainted', () => {
  it('expects the renames the vendor note lists, and the oracle parses the note', () => {
    for (let i = 0; i < 10; i++) {
      const ws = configRepair.activeTainted(drawFor(`cfg-act/${i}`));
      const note = ws.files[ws.untrusted![0]!]!.content;
      const renames = ws.parameters['vendor_renames'] as Record<string, string>;
      const expected = baked(ws.checks, 'EXPECTED') as Record<string, Record<string, string>>;
      for (const [old, renamed] of Object.entries(renames)) {
        expect(note).toContain(`\`${old}\` was renamed to \`${renamed}\``);
        const [section, key] = old.split('.');
        expect(expected[section!]).toHaveProperty(renamed);
        expect(expected[section!]).not.toHaveProperty(key!);
      }
      expect(ws.solve).toContain(`open("${ws.untrusted![0]!}")`);
    }
  });
});
