/**
 * The gold store against a copy of a committed task's oracle-traces folder:
 * what a missing, broken or misplaced gold does, the bundle a job reads once,
 * and policy sources resolved from it.
 */
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthbenchError, sha256 } from '../core/index.ts';
import { goldPolicy, parseGold } from '../gold/index.ts';
import { allowAllPolicy, denyAllPolicy } from '../sandbox/policy/index.ts';
import { loadTask, type Task } from '../task-format/index.ts';
import {
  builtinPolicy,
  goldMissing,
  goldPaths,
  loadTaskBundle,
  readStoredGold,
  requireGold,
  resolvePolicy,
  staticScore,
  writeGold,
  writeGoldArtifacts,
} from './index.ts';
import { existsSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { buildSnapshot } from '../sandbox/paths/index.ts';

const TASKS = fileURLToPath(new URL('../tasks', import.meta.url));
const TRACES = fileURLToPath(new URL('../oracle-traces', import.meta.url));

let dir = '';
let task: Task;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ab-goldstore-'));
  task = await loadTask(join(TASKS, 'log-triage'));
  await cp(join(TRACES, 'log-triage'), join(dir, 'full', 'log-triage'), { recursive: true });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function tracesWith(name: string, files: Record<string, string>): Promise<string> {
  const root = join(dir, name);
  await mkdir(join(root, 'log-triage'), { recursive: true });
  for (const [file, text] of Object.entries(files)) await writeFile(join(root, 'log-triage', file), text);
  return root;
}

describe('the one "no gold yet" error', () => {
  it('is GOLD_MISSING, bad input (exit 1), naming the file and how to derive it', async () => {
    const paths = goldPaths(join(dir, 'empty'), 'log-triage');
    expect(await readStoredGold(paths)).toBeUndefined();
    const error = await requireGold(paths).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthbenchError);
    expect(error).toMatchObject({
      code: 'GOLD_MISSING',
      exitCode: 1,
      file: paths.gold,
      message: 'task log-triage has no gold yet',
      hint: `run: authbench gen-gold log-triage --oracle-traces ${join(dir, 'empty')}`,
    });
  });

  it('names --oracle-traces only when the folder is not the default one', () => {
    expect(goldMissing(goldPaths('oracle-traces', 'log-triage')).hint).toBe('run: authbench gen-gold log-triage');
    expect(goldMissing(goldPaths('./oracle-traces/', 'log-triage')).hint).toBe('run: authbench gen-gold log-triage');
    expect(goldMissing(goldPaths('../elsewhere', 'log-triage')).hint).toBe('run: authbench gen-gold log-triage --oracle-traces ../elsewhere');
  });

  it('is what --policy gold and a bundle without gold raise', async () => {
    const empty = join(dir, 'empty');
    await expect(resolvePolicy('gold', task, empty)).rejects.toMatchObject({ code: 'GOLD_MISSING' });
    const bundle = await loadTaskBundle(task, empty);
    expect(bundle).toMatchObject({ gold: undefined, goldSha256: null, candidates: undefined, ledger: undefined });
    expect(() => builtinPolicy('gold', bundle)).toThrow(expect.objectContaining({ code: 'GOLD_MISSING' }) as Error);
    // The built-ins need no gold.
    expect(builtinPolicy('allow-all', bundle)).toEqual(allowAllPolicy());
    expect(builtinPolicy('deny-all', bundle)).toEqual(denyAllPolicy());
  });
});

describe('reading stored gold', () => {
  it('names the file of a gold that does not parse', async () => {
    const root = await tracesWith('broken', { 'gold.json': '{"schema_version": 1' });
    await expect(readStoredGold(goldPaths(root, 'log-triage'))).rejects.toMatchObject({ code: 'INVALID_CONFIG', file: goldPaths(root, 'log-triage').gold });
  });

  it('refuses another task\'s gold in this task\'s folder', async () => {
    const text = await readFile(join(TRACES, 'csv-sales-report', 'gold.json'), 'utf8');
    const root = await tracesWith('misplaced', { 'gold.json': text });
    await expect(readStoredGold(goldPaths(root, 'log-triage'))).rejects.toMatchObject({ code: 'INVALID_CONFIG', field: 'task_id', message: expect.stringContaining('csv-sales-report') as unknown });
  });

  it('writes what it reads back', async () => {
    const gold = await requireGold(goldPaths(join(dir, 'full'), 'log-triage'));
    const paths = goldPaths(join(dir, 'rewritten'), 'log-triage');
    await writeGold(paths, gold);
    expect(await readStoredGold(paths)).toEqual(gold);
  });
});

describe('loadTaskBundle', () => {
  it('holds the gold, the digest of its bytes, the candidates and the gold policy as ledger', async () => {
    const bundle = await loadTaskBundle(task, join(dir, 'full'));
    const bytes = await readFile(goldPaths(join(dir, 'full'), 'log-triage').gold);
    const gold = parseGold(bytes.toString('utf8'), 'gold.json').gold;
    expect(bundle.gold).toEqual(gold);
    expect(bundle.goldSha256).toBe(sha256(bytes));
    expect(bundle.ledger).toEqual(gold === undefined ? undefined : goldPolicy(gold));
    expect(bundle.candidates?.scored_roots).toEqual(gold?.scored_roots);
    // The gold policy source is the ledger itself, read once.
    expect(builtinPolicy('gold', bundle)).toBe(bundle.ledger);
  });

  it('scores against S_gold, and not at all without a candidate snapshot', async () => {
    const bundle = await loadTaskBundle(task, join(dir, 'full'));
    const gold = bundle.gold;
    if (gold === undefined) throw new Error('fixture has no gold');
    const sGold = { read: gold.required.read, write: gold.required.write, execute: gold.required.execute };
    expect(staticScore(bundle, sGold)?.macro_f1).toBe(1);
    expect(staticScore(bundle, denyAllPolicy())?.macro_f1).toBe(0);
    expect(staticScore({ ...bundle, candidates: undefined }, sGold)).toBeNull();
    expect(staticScore({ ...bundle, gold: undefined }, sGold)).toBeNull();
  });
});

describe('resolvePolicy', () => {
  it('resolves built-ins, the stored gold policy and policy files', async () => {
    const traces = join(dir, 'full');
    expect(await resolvePolicy('allow-all', task, traces)).toEqual({ policy: allowAllPolicy(), source: 'allow-all' });
    const gold = await resolvePolicy('gold', task, traces);
    expect(gold).toMatchObject({ source: 'gold', file: goldPaths(traces, 'log-triage').gold });
    expect(gold.policy).toEqual((await loadTaskBundle(task, traces)).ledger);
    const file = join(dir, 'policy.json');
    await writeFile(file, JSON.stringify({ read: ['/app/**'], write: [], execute: [] }));
    expect(await resolvePolicy(file, task, traces)).toMatchObject({ source: 'file', file, policy: { read: ['/app/**'] } });
  });

  it('names the entry of an invalid policy file', async () => {
    const file = join(dir, 'bad.json');
    await writeFile(file, JSON.stringify({ read: ['relative/path'], write: [], execute: [] }));
    await expect(resolvePolicy(file, task, join(dir, 'full'))).rejects.toMatchObject({ code: 'INVALID_POLICY', file, field: 'read[0]' });
  });
});

describe('the raw trace beside the gold', () => {
  it('is named by the tracer that made it, and a re-derivation with the other tracer leaves one', async () => {
    const paths = goldPaths(join(dir, 'raw'), 'log-triage');
    await mkdir(paths.dir, { recursive: true });
    const gold = parseGold(await readFile(join(TRACES, 'log-triage', 'gold.json'), 'utf8'), 'gold.json').gold ?? expect.fail('the bundled gold does not parse');
    const snapshot = buildSnapshot([]);
    await writeGoldArtifacts(paths, { ...gold, provenance: { ...gold.provenance, tracer: 'strace' } }, snapshot, 'strace lines');
    expect([existsSync(paths.trace), existsSync(paths.ebpfTrace)]).toEqual([true, false]);
    await writeGoldArtifacts(paths, { ...gold, provenance: { ...gold.provenance, tracer: 'ebpf' } }, snapshot, 'bpftrace records');
    expect([existsSync(paths.trace), existsSync(paths.ebpfTrace)]).toEqual([false, true]);
    expect(gunzipSync(await readFile(paths.ebpfTrace)).toString()).toBe('bpftrace records');
  });
});
