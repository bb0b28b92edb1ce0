/**
 * The build CA and proxies on Docker 20.10's legacy builder: RUN steps see
 * them (Python's default TLS context trusts the CA, apt is pointed at it, the
 * proxy variables are set), the image's layers and config keep none of it,
 * and the content hash is the same as without them. About 10 seconds: one
 * small build on the offline base, a cached rebuild, one `docker save`.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import tarStream from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_IMAGE_REF, cleanManaged, connectDocker, LABELS, type BuildRequest, type DockerEngine } from '../../docker/index.ts';

/** A throwaway self-signed CA (its key was discarded): only its certificate is needed. */
const TEST_CA = `-----BEGIN CERTIFICATE-----
MIIBmzCCAUGgAwIBAgIUUapdNk25Og76wRAG8S8TB4qGknMwCgYIKoZIzj0EAwIw
IjEgMB4GA1UEAwwXYXV0aGJlbmNoIHRlc3QgYnVpbGQgQ0EwIBcNMjYxMjAyMDMw
MjQ4WhgPMjEyNjExMDgwMzAyNDhaMCIxIDAeBgNVBAMMF2F1dGhiZW5jaCB0ZXN0
IGJ1aWxkIENBMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAESwzoo0ZnyLJii7A2
i7P337UBNibZCspB1ZZK7jDQEEt4EmG08OHLQsEi6xtxXETHmj+UNJa7/xdw8KSZ
v7gAhaNTMFEwHQYDVR0OBBYEFIwp9qNka3c+W/eD4jRu1FB8CTC4MB8GA1UdIwQY
MBaAFIwp9qNka3c+W/eD4jRu1FB8CTC4MA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZI
zj0EAwIDSAAwRQIgeKWLOXlDTFVnScOWaIgoTfJmu5pcBD3yVueCv+F8qZgCIQDT
NmSGQH4/F1xkZyfyHSDUnUHb4VYcnBDWXlgxmF85XQ==
-----END CERTIFICATE-----
`;
const PROXY = 'http://proxy.invalid:3128';
/** What must not be anywhere in the image's layers: the certificate, the files the wrapper wrote, the proxy. */
const TRACES = ['MIIBmzCCAUGgAwIBAgIUUapdNk25Og76wRAG8S8TB4qGknMw', 'authbench-build-ca', 'proxy.invalid'];

const RUN_ID = `build-host-test-${process.pid}-${Date.now()}`;
const RUN_LABELS = { [LABELS.run]: RUN_ID };
let engine: DockerEngine;
let dir: string;

beforeAll(async () => {
  engine = await connectDocker();
  dir = await mkdtemp(join(tmpdir(), 'authbench-build-host-'));
});

afterAll(async () => {
  if (engine !== undefined) await cleanManaged(engine, { labels: RUN_LABELS });
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** Which of `needles` occur in the files of the image's layers (every layer.tar of `docker save`, config and history excluded). */
async function layerTraces(tag: string, needles: readonly string[]): Promise<{ layers: number; found: string[] }> {
  const found = new Set<string>();
  const keep = Math.max(...needles.map((n) => n.length));
  let layers = 0;
  const extract = tarStream.extract();
  extract.on('entry', (header, stream, next) => {
    const isLayer = header.name.endsWith('layer.tar');
    if (isLayer) layers++;
    let tail = '';
    stream.on('data', (chunk: unknown) => {
      if (!isLayer) return;
      const text = tail + (chunk as Buffer).toString('latin1');
      for (const n of needles) if (text.includes(n)) found.add(n);
      tail = text.slice(-keep);
    });
    stream.on('end', next);
    stream.resume();
  });
  const saved = (await engine.docker.getImage(tag).get()) as Readable;
  await new Promise<void>((resolve, reject) => {
    extract.on('finish', resolve);
    extract.on('error', reject);
    saved.on('error', reject);
    saved.pipe(extract);
  });
  return { layers, found: [...found] };
}

describe('the build CA and proxies', () => {
  it('reach RUN steps, stay out of the image, and leave the content hash alone', async () => {
    // A nonce in the context: this run's build is always a real one.
    await writeFile(join(dir, 'nonce'), RUN_ID);
    await writeFile(
      join(dir, 'Dockerfile'),
      [
        `FROM ${BASE_IMAGE_REF}`,
        'COPY nonce /nonce',
        // Python's default context (what pip and urllib use) must list the CA; apt must be pointed at a bundle holding it.
        `RUN python3 -c "import ssl; names = [dict(x[0] for x in c['subject']).get('commonName') for c in ssl.create_default_context().get_ca_certs()]; assert 'authbench test build CA' in names, names" && \\`,
        `    apt_ca="$(apt-config dump | sed -n 's/^Acquire::https::CAInfo "\\(.*\\)";$/\\1/p')" && grep -q "${TRACES[0]}" "$apt_ca" && \\`,
        // The proxy compared by digest: the Dockerfile's own text is in the history, and must not name it either.
        `    test "$(printf '%s %s %s' "$HTTPS_PROXY" "$https_proxy" "$no_proxy" | sha256sum | cut -d' ' -f1)" = ${createHash('sha256').update(`${PROXY} ${PROXY} .corp`).digest('hex')} && \\`,
        '    echo "the CA and proxy were there" > /seen',
        'SHELL ["/bin/bash", "-o", "pipefail", "-c"]',
        'RUN ["sh", "-c", "grep -c \\"BEGIN CERTIFICATE\\" \\"$SSL_CERT_FILE\\" > /exec-form-saw-certificates"]',
        '',
      ].join('\n'),
    );
    const request: BuildRequest = { repository: 'authbench/build-host-test', kind: 'task-image', contextDir: dir, labels: RUN_LABELS };
    const built = await engine.buildImage({ ...request, hostAccess: { caBundle: TEST_CA, proxy: { HTTPS_PROXY: PROXY, https_proxy: PROXY, NO_PROXY: '.corp', no_proxy: '.corp' } } });
    expect(built.built).toBe(true);
    expect(built.hostAccess).toEqual({ caBundle: true, proxy: ['HTTPS_PROXY', 'NO_PROXY', 'https_proxy', 'no_proxy'], runsWithCa: 2, runsWithoutCa: [] });

    // (a) The RUN steps saw them (each would have failed the build otherwise).
    await using c = await engine.startContainer({ image: built.tag, labels: RUN_LABELS });
    const inside = await c.exec({ cmd: ['sh', '-c', 'cat /seen; test "$(cat /exec-form-saw-certificates)" -gt 1 && echo exec-form ok; env'] });
    expect(inside.exitCode).toBe(0);
    expect(inside.stdout).toContain('the CA and proxy were there\nexec-form ok\n');
    // A container of the image (what a rollout runs) gets none of it.
    const env = inside.stdout.split('exec-form ok\n')[1] ?? '';
    expect(env).toContain('PATH=');
    for (const v of ['SSL_CERT_FILE', 'REQUESTS_CA_BUNDLE', 'APT_CONFIG', 'AUTHBENCH_BUILD_CA', 'PROXY', 'proxy']) expect(env).not.toContain(v);

    // (b) No layer holds the certificate, the wrapper's files or the proxy; the config has no ENV for them.
    const scan = await layerTraces(built.tag, TRACES);
    expect(scan.layers).toBeGreaterThan(1);
    expect(scan.found).toEqual([]);
    const config = await engine.docker.getImage(built.tag).inspect();
    expect(JSON.stringify(config.Config.Env)).not.toMatch(/CERT|CA_BUNDLE|APT_CONFIG|AUTHBENCH_BUILD_CA|proxy/i);
    // What `docker history` still shows (the README says so): the legacy builder records the build args a RUN
    // step had — the CA certificate (public, no key) — but never Docker's predefined proxy args.
    const history = (await engine.docker.getImage(built.tag).history()) as { CreatedBy: string }[];
    expect(history.some((h) => h.CreatedBy.includes('AUTHBENCH_BUILD_CA=-----BEGIN CERTIFICATE-----'))).toBe(true);
    expect(history.some((h) => h.CreatedBy.includes('proxy.invalid'))).toBe(false);

    // (c) The same request without them is the same image: no docker build.
    const before = engine.stats.buildCalls;
    const again = await engine.buildImage(request);
    expect(again).toMatchObject({ tag: built.tag, built: false });
    expect(again.hostAccess).toBeUndefined();
    expect(engine.stats.buildCalls).toBe(before);
  });
});
