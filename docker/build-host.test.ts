import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AuthbenchError, parseDockerfile } from '../core/index.ts';
import { BUILD_CA_ARG, caWrapperScript, certificatesOf, injectBuildCa, proxyBuildArgs } from './build-host.ts';
import { translateHeredocs } from './heredoc.ts';

const CERT = '-----BEGIN CERTIFICATE-----\nMIIBfake+marker/AAAA\n-----END CERTIFICATE-----';

/** The argv of each RUN in exec form, as the daemon will read it (continuations joined). */
function runArgvs(text: string): string[][] {
  return parseDockerfile(text)
    .instructions.filter((i) => i.keyword === 'RUN' && i.args.startsWith('['))
    .map((i) => JSON.parse(i.args) as string[]);
}

describe('proxyBuildArgs', () => {
  it('takes either spelling of HTTP_PROXY, HTTPS_PROXY and NO_PROXY and passes both', () => {
    expect(proxyBuildArgs({ https_proxy: 'http://p:3128', NO_PROXY: 'localhost,.corp', HTTP_PROXY: '', PATH: '/bin', ALL_PROXY: 'socks5://x' })).toEqual({
      HTTPS_PROXY: 'http://p:3128',
      https_proxy: 'http://p:3128',
      NO_PROXY: 'localhost,.corp',
      no_proxy: 'localhost,.corp',
    });
    // The upper-case spelling wins when both are set.
    expect(proxyBuildArgs({ HTTP_PROXY: 'http://a', http_proxy: 'http://b' })).toEqual({ HTTP_PROXY: 'http://a', http_proxy: 'http://a' });
    expect(proxyBuildArgs({})).toEqual({});
  });
});

describe('certificatesOf', () => {
  it('keeps only the certificate blocks', () => {
    expect(certificatesOf(`subject=CN x\n${CERT}\ntrailing\n${CERT}\n`, 'ca.pem')).toBe(`${CERT}\n${CERT}\n`);
  });

  it('refuses a file with a private key, or without a certificate, naming the file', () => {
    for (const text of [`${CERT}\n-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----`, '-----BEGIN RSA PRIVATE KEY-----', 'not pem']) {
      const failure = (() => {
        try {
          return certificatesOf(text, 'ca.pem');
        } catch (e) {
          return e;
        }
      })();
      expect(failure).toBeInstanceOf(AuthbenchError);
      expect((failure as AuthbenchError).code).toBe('INVALID_ARGUMENT');
      expect((failure as AuthbenchError).file).toBe('ca.pem');
    }
  });
});

describe('injectBuildCa', () => {
  it('wraps each RUN in its stage shell, declares the CA arg after each FROM, and keeps later lines in place', () => {
    const text = ['FROM debian:12 AS build', 'RUN apt-get update && \\', '    apt-get install -y curl', 'ENV A=1', 'FROM build', 'RUN ["python3", "-c", "print(1)"]', 'COPY x /x'].join('\n');
    const out = injectBuildCa(text);
    expect(out.runsWithCa).toBe(2);
    expect(out.runsWithoutCa).toEqual([]);
    const lines = out.text.split('\n');
    expect(lines[1]).toBe(`ARG ${BUILD_CA_ARG}`);
    // The two-line RUN is one line plus padding: ENV stays two lines below it (one ARG above).
    expect(lines.indexOf('ENV A=1')).toBe(4);
    expect(lines.filter((l) => l === `ARG ${BUILD_CA_ARG}`)).toHaveLength(2);
    const [shellForm, execForm] = runArgvs(out.text);
    expect(shellForm?.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    expect(shellForm?.[2]).toBe(caWrapperScript('apt-get update &&     apt-get install -y curl'));
    expect(execForm).toEqual(['/bin/sh', '-c', caWrapperScript('"$@"'), 'sh', 'python3', '-c', 'print(1)']);
  });

  it("uses the stage's SHELL (inherited by stages built on it, or from the image), and leaves a non-POSIX one alone", () => {
    const text = [
      'FROM img AS a',
      'SHELL ["/bin/bash", "-o", "pipefail", "-c"]',
      'FROM a',
      'RUN echo $BASH_VERSION | cat',
      'FROM other',
      'RUN echo other',
      'SHELL ["pwsh", "-Command"]',
      'RUN Write-Host hi',
    ].join('\n');
    const out = injectBuildCa(text, { imageShell: (ref) => (ref === 'other' ? ['/bin/ash', '-c'] : undefined) });
    expect(runArgvs(out.text).map((a) => a.slice(0, -1))).toEqual([['/bin/bash', '-o', 'pipefail', '-c'], ['/bin/ash', '-c']]);
    expect(out.runsWithCa).toBe(2);
    expect(out.runsWithoutCa).toEqual(['line 8: RUN in SHELL ["pwsh","-Command"], not a POSIX shell']);
    expect(out.text).toContain('RUN Write-Host hi');
    // Stage `a` has no RUN: no ARG there.
    expect(out.text.split('\n').slice(0, 3)).toEqual(['FROM img AS a', 'SHELL ["/bin/bash", "-o", "pipefail", "-c"]', 'FROM a']);
  });

  it('leaves a Dockerfile without RUN unchanged', () => {
    const text = 'FROM scratch\nCOPY a /a\n';
    expect(injectBuildCa(text)).toEqual({ text, runsWithCa: 0, runsWithoutCa: [] });
  });

  it('splits a long RUN over continuation lines the parser cannot take for comments, and reads back the same command', () => {
    const long = `echo ${'x'.repeat(5000)}`;
    // Blanks then a `#` exactly where the first cut falls: the next line must not start with them.
    const bodyAt = `RUN ${JSON.stringify(['/bin/sh', '-c', caWrapperScript('@')])}`.indexOf('@');
    const hashed = `echo ${'y'.repeat(4096 - bodyAt - 5)}   # not a comment ${'z'.repeat(5000)}`;
    expect(`RUN ${JSON.stringify(['/bin/sh', '-c', caWrapperScript(hashed)])}`.slice(4096, 4100)).toBe('   #');
    for (const body of [long, hashed]) {
      const out = injectBuildCa(`FROM img\nRUN ${body}\n`);
      const lines = out.text.split('\n');
      expect(lines.length).toBeGreaterThan(4);
      for (const l of lines.slice(3, -1)) expect(l).not.toMatch(/^[ \t]*(#|$)/);
      expect(runArgvs(out.text)).toEqual([['/bin/sh', '-c', caWrapperScript(body)]]);
    }
  });
});

describe('the CA wrapper script', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'ab-ca-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  function run(body: string): { status: number | null; stdout: string } {
    const [shell, ...args] = runArgvs(injectBuildCa(translateHeredocs(`FROM img\nRUN ${body}\n`).text).text)[0] ?? [];
    const r = spawnSync(shell ?? '/bin/sh', args, { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', TMPDIR: scratch, [BUILD_CA_ARG]: CERT }, encoding: 'utf8' });
    return { status: r.status, stdout: r.stdout };
  }

  const leftovers = (): string[] => [...readdirSync(scratch), ...readdirSync('/dev/shm').filter((f) => f.startsWith('authbench-build-ca.'))];

  it('gives the command the CA in every variable tools read, without the raw variable, and removes it whatever the exit status', () => {
    const before = leftovers();
    const seen = run(
      'test -z "${AUTHBENCH_BUILD_CA:-}" && grep -q "fake+marker" "$SSL_CERT_FILE" && for v in REQUESTS_CA_BUNDLE PIP_CERT CURL_CA_BUNDLE GIT_SSL_CAINFO NODE_EXTRA_CA_CERTS; do eval "test \\"\\$$v\\" = \\"$SSL_CERT_FILE\\"" || exit 9; done && grep -q "CAInfo \\"$SSL_CERT_FILE\\"" "$APT_CONFIG" && echo seen; exit 3',
    );
    expect(seen).toEqual({ status: 3, stdout: 'seen\n' });
    // An `exec` replaces only the subshell: the cleanup still runs.
    expect(run('exec true').status).toBe(0);
    expect(run('exit 0 # a trailing comment').status).toBe(0);
    // A heredoc translated for the legacy builder first, then wrapped.
    expect(run('<<EOF\ntest -s "$SSL_CERT_FILE" && echo "heredoc saw the CA"\nEOF')).toEqual({ status: 0, stdout: 'heredoc saw the CA\n' });
    expect(leftovers()).toEqual(before);
  });
});
