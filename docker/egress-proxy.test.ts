import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { EGRESS_PROXY_SCRIPT } from './egress-proxy-script.ts';
import { egressProxyCommand, egressProxyEnv, parseEgressLog, type EgressRule } from './egress-proxy.ts';

describe('egressProxyCommand', () => {
  it('runs the script with its rules (lower case, any port as null) as one JSON argument', () => {
    const { entrypoint, command } = egressProxyCommand([{ host: 'API.example.com', ports: [443] }, { host: 'pypi.org' }], 3128);
    expect(entrypoint).toEqual(['python3', '-c', EGRESS_PROXY_SCRIPT]);
    expect(command).toHaveLength(1);
    const config = JSON.parse(command[0] ?? '') as Record<string, unknown>;
    expect(config).toMatchObject({ bind: 'authbench-egress', port: 3128, rules: [{ host: 'api.example.com', ports: [443] }, { host: 'pypi.org', ports: null }] });
  });
});

describe('egressProxyEnv', () => {
  it('both spellings of the proxy variables; sidecars and loopback go direct', () => {
    const env = egressProxyEnv(['metadata-mock'], 'authbench-egress', 3128);
    for (const name of ['http_proxy', 'https_proxy', 'HTTP_PROXY', 'HTTPS_PROXY']) expect(env[name]).toBe('http://authbench-egress:3128');
    expect(env.NO_PROXY).toBe('localhost,127.0.0.1,::1,metadata-mock');
    expect(env.no_proxy).toBe(env.NO_PROXY);
  });
});

describe('parseEgressLog', () => {
  it('keeps decisions and skips a line cut mid-write', () => {
    const text = [
      JSON.stringify({ verdict: 'allowed', method: 'CONNECT', host: 'a.example', port: 443, t: 1 }),
      JSON.stringify({ verdict: 'refused', method: 'GET', host: 'b.example', port: 80, t: 2 }),
      '{"verdict": "allo',
      JSON.stringify({ verdict: 'maybe', t: 3 }),
      '',
    ].join('\n');
    expect(parseEgressLog(text).map((d) => [d.verdict, d.host])).toEqual([
      ['allowed', 'a.example'],
      ['refused', 'b.example'],
    ]);
  });
});

/** The proxy's own parser and matcher, run by the host's python3 (the same code the container runs). */
const python = spawnSync('python3', ['--version']).status === 0;

interface Verdict {
  verdict: string;
  host?: string;
  port?: number;
  reason?: string;
  upstream?: string;
}

function check(cases: readonly { head: string; rules: readonly EgressRule[] }[]): Verdict[] {
  const rules = (r: readonly EgressRule[]) => r.map((x) => ({ host: x.host, ports: x.ports ?? null }));
  const r = spawnSync('python3', ['-c', EGRESS_PROXY_SCRIPT, '--check'], { input: JSON.stringify(cases.map((c) => ({ head: c.head, rules: rules(c.rules) }))), encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as Verdict[];
}

const RULES: EgressRule[] = [{ host: 'allowed.example' }, { host: 'api.example.com', ports: [443] }];
const head = (...lines: string[]): string => lines.join('\r\n');

const MATCHING: [string, string, Partial<Verdict>][] = [
  ['CONNECT to an allowed host, any port', head('CONNECT allowed.example:443 HTTP/1.1', 'Host: allowed.example:443'), { verdict: 'allowed', host: 'allowed.example', port: 443 }],
  ['case and a trailing dot do not matter', head('CONNECT ALLOWED.Example.:8443 HTTP/1.1'), { verdict: 'allowed', host: 'allowed.example', port: 8443 }],
  ['a port rule admits its port', head('CONNECT api.example.com:443 HTTP/1.1'), { verdict: 'allowed', port: 443 }],
  ['and no other', head('CONNECT api.example.com:22 HTTP/1.1'), { verdict: 'refused', host: 'api.example.com', port: 22 }],
  ['exact match only: no subdomain', head('CONNECT evil.allowed.example:443 HTTP/1.1'), { verdict: 'refused', host: 'evil.allowed.example' }],
  ['exact match only: no suffix trick', head('CONNECT allowed.example.evil.net:443 HTTP/1.1'), { verdict: 'refused' }],
  ['plain HTTP, absolute form, default port 80', head('GET http://allowed.example/x?y=1 HTTP/1.1', 'Host: allowed.example'), { verdict: 'allowed', host: 'allowed.example', port: 80 }],
  ['the URL decides, not a Host header that disagrees', head('GET http://blocked.example/ HTTP/1.1', 'Host: allowed.example'), { verdict: 'refused', host: 'blocked.example' }],
  ['origin form goes by its Host header', head('GET /index.html HTTP/1.1', 'Host: allowed.example:8080'), { verdict: 'allowed', port: 8080 }],
  ['origin form to another host', head('GET / HTTP/1.1', 'Host: blocked.example'), { verdict: 'refused', host: 'blocked.example' }],
  ['IPv6 literal', head('CONNECT [::1]:443 HTTP/1.1'), { verdict: 'refused', host: '::1', port: 443 }],
];

const ERRORS: [string, string, RegExp][] = [
  ['CONNECT without a port', head('CONNECT allowed.example HTTP/1.1'), /host:port/],
  ['credentials in the URL', head('GET http://user@allowed.example/ HTTP/1.1'), /credentials/],
  ['https:// without CONNECT', head('GET https://allowed.example/ HTTP/1.1'), /CONNECT/],
  ['two Host headers', head('GET / HTTP/1.1', 'Host: allowed.example', 'Host: blocked.example'), /single Host/],
  ['no Host header', head('GET / HTTP/1.1'), /single Host/],
  ['a port out of range', head('CONNECT allowed.example:70000 HTTP/1.1'), /port/],
  ['not HTTP', head('hello'), /request line/],
];

/** Every request above under RULES, decided by one python3 run (each start costs ~0.3 s here). */
const decided = new Map<string, Verdict>();
function decide(request: string): Verdict | undefined {
  if (decided.size === 0) {
    const requests = [...MATCHING, ...ERRORS].map((c) => c[1]);
    check(requests.map((r) => ({ head: r, rules: RULES }))).forEach((v, i) => decided.set(requests[i] ?? '', v));
  }
  return decided.get(request);
}

describe.skipIf(!python)('the proxy script: request parsing and host matching (host python3)', () => {
  if (!python) console.warn('egress proxy script tests skipped: no python3 on this host');

  it.each(MATCHING)('%s', (_name, request, expected) => {
    expect(decide(request)).toMatchObject(expected);
  });

  it.each(ERRORS)('%s is an error, never forwarded', (_name, request, reason) => {
    const verdict = decide(request);
    expect(verdict?.verdict).toBe('error');
    expect(verdict?.reason).toMatch(reason);
  });

  it('no rules: everything refused', () => {
    expect(check([{ head: head('CONNECT allowed.example:443 HTTP/1.1'), rules: [] }])[0]?.verdict).toBe('refused');
  });

  it('plain HTTP goes upstream in origin form, the Host from the URL, hop-by-hop headers dropped', () => {
    const [verdict] = check([
      { head: head('GET http://allowed.example:8080/a?b=1 HTTP/1.1', 'Host: wrong.example', 'Proxy-Connection: keep-alive', 'Proxy-Authorization: Basic eA==', 'Accept: */*'), rules: RULES },
    ]);
    expect(verdict?.upstream).toBe(head('GET /a?b=1 HTTP/1.1', 'Accept: */*', 'Host: allowed.example:8080', 'Connection: close', '', ''));
  });
});
