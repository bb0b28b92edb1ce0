import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fakeEngine } from '../docker/test-support.ts';
import { loadTask } from '../task-format/index.ts';
import { planRollouts, type EvalConfig } from './config.ts';
import { executeJob, type RolloutRunner } from './execute.ts';
import type { PreparedJob } from './prepare.ts';
import { deferRemoval, TeardownQueue } from './teardown.ts';
import { fakeResult, testEvalConfig } from './test-support.ts';

const TASKS = fileURLToPath(new URL('../tasks', import.meta.url));
const EVAL_CONFIG: EvalConfig = testEvalConfig();

function box(log: string[], removal: Promise<void>, closeFails = false) {
  return {
    session: {
      close: async (): Promise<void> => {
        log.push('close');
        if (closeFails) throw new Error('close failed');
        await Promise.resolve();
      },
    },
    [Symbol.asyncDispose]: async (): Promise<void> => {
      log.push('remove start');
      await removal;
      log.push('remove end');
    },
  } as unknown as Parameters<typeof deferRemoval>[0];
}

describe('TeardownQueue', () => {
  it('lets dispose return before the removal ends, and settle waits for it', async () => {
    const log: string[] = [];
    let finish = (): void => undefined;
    const removal = new Promise<void>((resolve) => (finish = resolve));
    const queue = new TeardownQueue();
    {
      await using _b = deferRemoval(box(log, removal), queue, 'r1');
    }
    log.push('result written');
    expect(log).toEqual(['close', 'remove start', 'result written']);
    expect(queue.size).toBe(1);
    const settled = queue.settle();
    finish();
    expect(await settled).toEqual([]);
    expect(log.at(-1)).toBe('remove end');
    expect(queue.size).toBe(0);
  });

  it('reports a failed removal at settle, with its label', async () => {
    const queue = new TeardownQueue();
    {
      await using _b = deferRemoval(box([], Promise.reject(new Error('daemon gone'))), queue, 'r2');
    }
    expect(await queue.settle()).toEqual([{ label: 'r2', message: 'daemon gone' }]);
  });

  it('still removes when closing the session fails, and the close error is the disposal error', async () => {
    const log: string[] = [];
    const queue = new TeardownQueue();
    const scope = async (): Promise<void> => {
      await using _b = deferRemoval(box(log, Promise.resolve(), true), queue, 'r3');
    };
    await expect(scope()).rejects.toThrow('close failed');
    expect(await queue.settle()).toEqual([]);
    expect(log).toEqual(['close', 'remove start', 'remove end']);
  });

  it('without a queue, disposes inline as before', async () => {
    const log: string[] = [];
    {
      await using _b = deferRemoval(box(log, Promise.resolve()), undefined, 'r4');
    }
    expect(log).toEqual(['remove start', 'remove end']);
  });
});

describe('executeJob with deferred removals', () => {
  it('writes each result before its removal ends, waits for every removal, and returns the failed ones', async () => {
    const root = await mkdtemp(join(tmpdir(), 'ab-teardown-'));
    try {
      const task = await loadTask(join(TASKS, 'log-triage'));
      const config: EvalConfig = { ...EVAL_CONFIG, tasks_dir: TASKS };
      const prepared: PreparedJob = { inputsFor: () => Promise.resolve({ task, image: 'img', policy: undefined, ledger: undefined, staticScore: null }) };
      const dir = join(root, 'job');
      const seenAtRemoval: boolean[] = [];
      let removed = 0;
      const runner: RolloutRunner = (spec, ctx) => {
        expect(ctx.teardown).toBeDefined();
        ctx.teardown?.defer(spec.id, async () => {
          await new Promise((resolve) => setTimeout(resolve, 20));
          // The pool wrote the result while this removal was still running.
          seenAtRemoval.push(existsSync(join(dir, spec.id, 'result.json')));
          removed += 1;
          if (spec.attempt === 2) throw new Error('daemon said no');
        });
        return Promise.resolve(fakeResult(spec, 'completed'));
      };
      const specs = planRollouts(['log-triage'], { ...config, attempts: 3 });
      const out = await executeJob(specs, prepared, { config, dir, jobId: 'j', concurrency: 1, engine: fakeEngine(), runRollout: runner, cpuPinning: 'off' });
      expect(removed).toBe(3);
      expect(seenAtRemoval).toEqual([true, true, true]);
      expect(out.results.size).toBe(3);
      expect(out.leaked).toEqual([{ label: specs[1]?.id, message: 'daemon said no' }]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
