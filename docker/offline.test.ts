import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseDockerfile } from '../core/index.ts';
import { BASE_RECIPE, dpkgVersion, OFFLINE_BASES, offlineBaseRecipe, pythonLayout, recipeHash } from './base-images.ts';
import { refOrigin } from './build.ts';
import { readsContext } from './context.ts';
import { findDatasetRoot, listDatasetRecipes, recipeFor } from './dataset-bases.ts';
import { factDifferences, formatSubstitution, parseLineage, requestedImageFacts } from './image-facts.ts';
import { debianAptName, requirementName, rewritePackageInstalls } from './offline-packages.ts';

describe('requestedImageFacts / factDifferences', () => {
  it.each([
    ['python:3.13-slim-bookworm', { os: 'debian', osVersion: '12', python: '3.13' }],
    ['python:3.11', { python: '3.11' }],
    ['docker.io/library/python:3.12.4-slim', { python: '3.12' }],
    ['ubuntu:24.04', { os: 'ubuntu', osVersion: '24.04', python: '3.12' }],
    ['ubuntu:noble', { os: 'ubuntu', osVersion: '24.04', python: '3.12' }],
    ['ubuntu', { os: 'ubuntu' }],
    ['debian:bookworm-slim', { os: 'debian', osVersion: '12', python: '3.11' }],
    ['debian:13', { os: 'debian', osVersion: '13', python: '3.13' }],
    ['ghcr.io/laude-institute/t-bench/ubuntu-24-04:20250624', { os: 'ubuntu', osVersion: '24.04', python: '3.12' }],
    ['ghcr.io/laude-institute/t-bench/python-3-13:20250620', { python: '3.13' }],
    ['node:20', {}],
  ])('%s', (ref, facts) => {
    expect(requestedImageFacts(ref)).toEqual(facts);
  });

  it('names every fact both sides know and disagree on, nothing else', () => {
    const bookworm = { os: 'debian', osVersion: '12', python: '3.11' };
    expect(factDifferences(requestedImageFacts('ubuntu:24.04'), bookworm)).toEqual(['os ubuntu 24.04 → debian 12', 'python 3.12 → 3.11']);
    expect(factDifferences(requestedImageFacts('python:3.13-slim-bookworm'), { os: 'debian', osVersion: '13', python: '3.13' })).toEqual([
      'os debian 12 → debian 13',
    ]);
    expect(factDifferences(requestedImageFacts('python:3.13'), { os: 'debian', osVersion: '13', python: '3.13' })).toEqual([]);
    expect(factDifferences(requestedImageFacts('debian:bookworm'), bookworm)).toEqual([]);
    expect(factDifferences({}, bookworm)).toEqual([]);
  });

  it('the python substitutes provide what the map promises', () => {
    expect(offlineBaseRecipe('authbench/base:python3.13-trixie')?.facts).toEqual({ os: 'debian', osVersion: '13', python: '3.13' });
    expect(offlineBaseRecipe('authbench/base:python3.11-bookworm')?.facts.python).toBe('3.11');
    expect(offlineBaseRecipe('authbench/base:nope')).toBeUndefined();
  });
});

describe('lineage labels', () => {
  it('round-trips, and anything unreadable is no lineage', () => {
    const records = [{ from: 'ubuntu:24.04', to: 'authbench/base:bookworm', via: 'map' as const, differs: ['os ubuntu 24.04 → debian 12'] }];
    expect(parseLineage(JSON.stringify(records))).toEqual(records);
    expect(parseLineage('not json')).toEqual([]);
    expect(parseLineage('[{"from":1}]')).toEqual([]);
    expect(parseLineage(undefined)).toEqual([]);
    expect(formatSubstitution({ ...records[0]!, via: 'recipe', recipe: 'docker/bases/u/plain.Dockerfile' } as never)).toBe(
      'ubuntu:24.04 → authbench/base:bookworm [recipe docker/bases/u/plain.Dockerfile] (≠ os ubuntu 24.04 → debian 12)',
    );
  });
});

describe('offline base recipes', () => {
  it('keeps the general-purpose base hash (every image built on it keeps its tag)', () => {
    const bookworm = OFFLINE_BASES.find((r) => r.name === 'bookworm');
    expect(bookworm).toBeDefined();
    expect(recipeHash(bookworm)).toBe(recipeHash(BASE_RECIPE));
    expect(new Set(OFFLINE_BASES.map((r) => recipeHash(r))).size).toBe(OFFLINE_BASES.length);
  });

  it('lays python out like the official image: /usr/local/bin links, no PEP 668 marker', () => {
    expect(pythonLayout('3.13')).toEqual([
      { op: 'symlink', path: '/usr/local/bin/python3.13', target: '/usr/bin/python3.13' },
      { op: 'symlink', path: '/usr/local/bin/python3', target: 'python3.13' },
      { op: 'symlink', path: '/usr/local/bin/python', target: 'python3' },
      { op: 'symlink', path: '/usr/local/bin/pip3', target: '/usr/bin/pip3' },
      { op: 'symlink', path: '/usr/local/bin/pip3.13', target: 'pip3' },
      { op: 'symlink', path: '/usr/local/bin/pip', target: 'pip3' },
      { op: 'remove', path: '/usr/lib/python3.13/EXTERNALLY-MANAGED' },
    ]);
  });

  it('reads an installed version from the dpkg status file', () => {
    const status = 'Package: python3.13-minimal\nVersion: 3.13.0-1\n\nPackage: python3.13\nStatus: install ok installed\nVersion: 3.13.5-2+b1\n\nPackage: x\nVersion: 1:2.0-1\n';
    expect(dpkgVersion(status, 'python3.13')).toBe('3.13.5-2+b1');
    expect(dpkgVersion(status, 'python3.13', true)).toBe('3.13.5');
    expect(dpkgVersion(status, 'x', true)).toBe('2.0');
    expect(dpkgVersion(status, 'python3.1')).toBeUndefined();
  });
});

describe('debianAptName', () => {
  it.each([
    ['libssl3t64', 'libssl3'],
    ['libcurl4t64:amd64', 'libcurl4:amd64'],
    ['libicu74', 'libicu72'],
    ['python3.12-venv', 'python3.11-venv'],
    ['curl', undefined],
    ['python3-pytest', undefined],
  ])('%s → %s', (ubuntu, debian) => {
    expect(debianAptName(ubuntu)).toBe(debian);
  });
});

describe('requirementName', () => {
  it.each([
    ['pytest==8.4.1', 'pytest'],
    ['PyYAML>=6', 'pyyaml'],
    ['pytest_json_ctrf==0.3.5', 'pytest-json-ctrf'],
    ['requests[socks]>=2,<3', 'requests'],
    ['./local', undefined],
    ['git+https://example.invalid/x.git', undefined],
  ])('%s → %s', (req, name) => {
    expect(requirementName(req)).toBe(name);
  });
});

describe('rewritePackageInstalls', () => {
  const both = new Map([[0, { aptUbuntuToDebian: true, pipOffline: true }]]);

  it('serves a pinned pip install from Debian and leaves out Harbor-only plugins, flagged', () => {
    const text = [
      'FROM authbench/base:python3.13-trixie',
      'RUN apt-get update \\',
      '    && apt-get install -y curl \\',
      '    && python3 -m pip install --no-cache-dir pytest==8.4.1 pytest-json-ctrf==0.3.5 \\',
      '    && rm -rf /var/lib/apt/lists/*',
      'USER u',
    ].join('\n');
    const out = rewritePackageInstalls(text, both);
    const lines = out.text.split('\n');
    expect(lines[1]).toBe(
      'RUN apt-get update     && apt-get install -y curl     && { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-pytest; }     && rm -rf /var/lib/apt/lists/*',
    );
    expect(lines.slice(2, 5)).toEqual(['', '', '']);
    expect(lines[5]).toBe('USER u');
    expect(out.translations).toHaveLength(1);
    expect(out.translations[0]).toMatchObject({ kind: 'pip-offline', line: 2, flagged: true });
    expect(out.translations[0]?.detail).toContain('pytest-json-ctrf==0.3.5 left out');
  });

  it('a pip install of only left-out requirements becomes `true`; an operator glued to the last word stays', () => {
    const out = rewritePackageInstalls('FROM x\nRUN pip3 install pytest-json-ctrf; echo done\n', both);
    expect(out.text.split('\n')[1]).toBe('RUN true; echo done');
  });

  it('leaves alone, and reports, what cannot work offline: unknown packages, -r files, index URLs', () => {
    for (const cmd of ['pip install leftpad-for-python', 'pip install -r requirements.txt', 'pip install --index-url http://x.invalid pytest']) {
      const out = rewritePackageInstalls(`FROM x\nRUN ${cmd}\n`, both);
      expect(out.text).toBe(`FROM x\nRUN ${cmd}\n`);
      expect(out.blocked).toHaveLength(1);
      expect(out.blocked[0]).toMatch(/^line 2: pip install/);
    }
  });

  it('renames Ubuntu package names in apt installs, flagged', () => {
    const out = rewritePackageInstalls('FROM x\nRUN apt-get install -y --no-install-recommends libssl3t64 curl libicu74 && echo ok\n', both);
    expect(out.text.split('\n')[1]).toBe('RUN apt-get install -y --no-install-recommends libssl3 curl libicu72 && echo ok');
    expect(out.translations[0]).toMatchObject({ kind: 'apt-name', flagged: true, detail: 'apt package names for Debian: libssl3t64 → libssl3, libicu74 → libicu72' });
  });

  it('touches only the stages it is asked to, and nothing when asked for nothing', () => {
    const text = 'FROM a\nRUN pip install pytest\nFROM b\nRUN pip install pytest\n';
    const out = rewritePackageInstalls(text, new Map([[1, { aptUbuntuToDebian: false, pipOffline: true }]]));
    expect(out.text.split('\n')[1]).toBe('RUN pip install pytest');
    expect(out.text.split('\n')[3]).toContain('python3-pytest');
    expect(rewritePackageInstalls(text, new Map([[0, { aptUbuntuToDebian: false, pipOffline: false }]]))).toEqual({ text, translations: [], blocked: [] });
  });
});

describe('refOrigin', () => {
  it('names the ARG and whether its default or a build arg chose the image', () => {
    const df = parseDockerfile('ARG PREFIX=ghcr.io\nARG BASE=x:local\nFROM ${PREFIX}/o/o:1 AS rt\nFROM $BASE\n');
    expect(refOrigin(df, 'ghcr.io/o/o:1')).toBe('FROM line 3, from ARG PREFIX (its default, line 1)');
    expect(refOrigin(parseDockerfile('ARG BASE=x:local\nFROM $BASE\n', { BASE: 'y:1' }), 'y:1', { BASE: 'y:1' })).toBe('FROM line 2, from ARG BASE (build arg)');
    expect(refOrigin(parseDockerfile('FROM plain:1\n'), 'plain:1')).toBe('FROM line 1');
  });
});

describe('readsContext', () => {
  it('is true for COPY/ADD from the context, false for none or only --from', () => {
    expect(readsContext('FROM x\nRUN true\n')).toBe(false);
    expect(readsContext('FROM x AS a\nFROM y\nCOPY --from=a /a /a\nCOPY --chown=1 --from=a /b /b\n')).toBe(false);
    expect(readsContext('FROM x\nCOPY libs/ /opt/\n')).toBe(true);
    expect(readsContext('FROM x\nADD --chown=1:1 a /a\n')).toBe(true);
  });
});

describe('dataset recipes', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('are found from any folder inside the dataset and named as its scripts name them', async () => {
    const root = await mkdtemp(join(tmpdir(), 'dataset-'));
    dirs.push(root);
    await mkdir(join(root, 'docker/bases/tbench-ubuntu-py'), { recursive: true });
    await mkdir(join(root, 'docker/bases/python-py313'), { recursive: true });
    await mkdir(join(root, 'tasks/t1/environment'), { recursive: true });
    for (const f of ['docker/bases/tbench-ubuntu-py/plain.Dockerfile', 'docker/bases/tbench-ubuntu-py/openclaw.Dockerfile', 'docker/bases/python-py313/plain.Dockerfile']) {
      await writeFile(join(root, f), 'FROM x\n');
    }
    await writeFile(join(root, 'docker/bases/python-py313/README.md'), 'not a recipe');
    expect(await findDatasetRoot(join(root, 'tasks/t1/environment'))).toBe(root);
    expect((await listDatasetRecipes(root)).map((r) => [r.dockerfile, r.product, r.repository])).toEqual([
      ['docker/bases/python-py313/plain.Dockerfile', 'authbench-python-py313-plain-base:local', 'authbench/dataset-base-python-py313-plain'],
      ['docker/bases/tbench-ubuntu-py/openclaw.Dockerfile', 'authbench-tbench-ubuntu-py-openclaw-base:local', 'authbench/dataset-base-tbench-ubuntu-py-openclaw'],
      ['docker/bases/tbench-ubuntu-py/plain.Dockerfile', 'authbench-tbench-ubuntu-py-plain-base:local', 'authbench/dataset-base-tbench-ubuntu-py-plain'],
    ]);
    expect((await recipeFor(join(root, 'tasks/t1/environment'), 'authbench-tbench-ubuntu-py-plain-base:local'))?.variant).toBe('plain');
    expect(await recipeFor(join(root, 'tasks/t1/environment'), 'authbench-other-plain-base:local')).toBeUndefined();
  });

  it('a folder outside any dataset has none', async () => {
    const lone = await mkdtemp(join(tmpdir(), 'no-dataset-'));
    dirs.push(lone);
    // The walk goes up to /, which has no docker/bases/ on a machine that runs tests.
    expect(await findDatasetRoot(lone)).toBeUndefined();
  });
});
