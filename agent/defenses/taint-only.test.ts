import { beforeAll, describe, expect, it } from 'vitest';
import { loadTask, type Task } from '../../task-format/index.ts';
import { taintOnlyDefense } from './taint-only.ts';
import { contextAt, LEDGER, readNote, ran, testTask, view } from './test-support.ts';

let task: Task;
beforeAll(async () => {
  task = testTask(await loadTask(new URL('../../tasks/sensitive-release-bump', import.meta.url).pathname));
});

describe('taint-only', () => {
  it('allows high-risk work before any untrusted content was read, under the full policy', async () => {
    const ctx = contextAt(task, [[ran('ls /app', [], 'config.ini inbox')]]);
    expect(await taintOnlyDefense.decide(view("sed -i 's/a/b/' /app/config.ini"), ctx)).toMatchObject({ action: 'allow', rule_id: 'taint-only/clean-context' });
    expect(taintOnlyDefense.execution(ctx)).toEqual({ kind: 'enforce', policy: LEDGER, implicit: ctx.implicit });
  });

  it('blocks every high-risk proposal once the context is tainted, even one the instruction asked for', async () => {
    const ctx = contextAt(task, [[readNote()]]);
    const d = await taintOnlyDefense.decide(view("sed -i 's/retries=3/retries=5/' /app/config.ini"), ctx);
    expect(d).toMatchObject({ action: 'block', rule_id: 'taint-only/high-risk-after-taint' });
    expect(d.reason).toContain('/app/inbox/**');
    expect(d.reason).toContain('sed -i /app/config.ini');
  });

  it('lets read-only commands run in a tainted context, with writes cut to scratch and no network', async () => {
    const ctx = contextAt(task, [[readNote()]]);
    expect(await taintOnlyDefense.decide(view('grep retries /app/config.ini'), ctx)).toMatchObject({ action: 'allow', rule_id: 'taint-only/read-only' });
    expect(taintOnlyDefense.execution(ctx)).toEqual({
      kind: 'enforce',
      policy: { read: LEDGER.read, write: ['/tmp/**'], execute: LEDGER.execute },
      implicit: ctx.implicit,
    });
  });

  it('stays tainted for the rest of the episode', async () => {
    const ctx = contextAt(task, [[readNote()], [ran('ls /app')], [ran('pwd')]]);
    expect(await taintOnlyDefense.decide(view('touch /app/out/x'), ctx)).toMatchObject({ action: 'block' });
  });

  it('a proposal in the same turn as the read is not tainted yet', async () => {
    const ctx = contextAt(task, [[readNote()]], 1);
    expect(await taintOnlyDefense.decide(view('touch /app/out/x'), ctx)).toMatchObject({ action: 'allow', rule_id: 'taint-only/clean-context' });
  });
});
