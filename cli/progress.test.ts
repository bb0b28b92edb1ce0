import { describe, expect, it } from 'vitest';
import { createProgress, itemLine } from './progress.ts';

/** A writable that records what was written; `tty` adds the cursor methods a terminal has. */
function sink(tty: boolean): { stream: NodeJS.WriteStream; text: () => string } {
  const chunks: string[] = [];
  const stream = {
    isTTY: tty,
    columns: 120,
    write: (s: string | Uint8Array) => {
      chunks.push(typeof s === 'string' ? s : Buffer.from(s).toString('utf8'));
      return true;
    },
    cursorTo: () => true,
    moveCursor: () => true,
    clearLine: () => true,
    clearScreenDown: () => true,
    on: () => stream,
    removeListener: () => stream,
  };
  return { stream: stream as unknown as NodeJS.WriteStream, text: () => chunks.join('') };
}

describe('createProgress', () => {
  it('without a terminal writes every line, kept or detail, and no bar', () => {
    const out = sink(false);
    const p = createProgress({ unit: 'rollouts', enabled: true, stream: out.stream });
    p.detail('[1/2] pass a');
    p.update(1, 2, 'x');
    p.log('[2/2] fail b');
    p.stop();
    expect(out.text()).toBe('[1/2] pass a\n[2/2] fail b\n');
  });

  it('on a terminal draws the bar with counts and keeps only logged lines', () => {
    const out = sink(true);
    const p = createProgress({ unit: 'rollouts', enabled: true, stream: out.stream });
    p.update(0, 10, 'starting');
    p.detail('[1/10] pass a');
    p.update(3, 10, '3 pass 0 fail');
    p.log('[4/10] fail b');
    p.update(4, 10, '3 pass 1 fail');
    p.stop();
    const text = out.text();
    expect(text).toContain('4/10 rollouts');
    expect(text).toContain('3 pass 1 fail');
    expect(text).toContain('[4/10] fail b');
    expect(text).not.toContain('pass a');
  });

  it('disabled (--json) writes nothing', () => {
    const out = sink(true);
    const p = createProgress({ unit: 'rollouts', enabled: false, stream: out.stream });
    p.update(1, 2, 'x');
    p.log('kept');
    p.stop();
    expect(out.text()).toBe('');
  });
});

describe('finish', () => {
  it('keeps a line that needs a look and moves the bar; an ok item is only a detail', () => {
    const out = sink(true);
    const p = createProgress({ unit: 'tasks', enabled: true, stream: out.stream });
    p.update(0, 2, 'starting');
    p.finish({ done: 1, total: 2, line: itemLine(1, 2, true, 'quiet-task'), keep: false, status: 'one' });
    p.finish({ done: 2, total: 2, line: itemLine(2, 2, false, 'loud-task'), keep: true, status: 'two' });
    p.stop();
    const text = out.text();
    expect(text).toContain('2/2 tasks');
    expect(text).toMatch(/\[2\/2\].*FAIL.*loud-task/);
    expect(text).not.toContain('quiet-task');
  });

  it('without a terminal prints every finished item', () => {
    const out = sink(false);
    const p = createProgress({ unit: 'tasks', enabled: true, stream: out.stream });
    p.finish({ done: 1, total: 1, line: 'a', keep: false, status: 's' });
    expect(out.text()).toBe('a\n');
  });
});

describe('untrusted text in progress lines', () => {
  // An infrastructure error's message comes from a model endpoint or Docker; a task id from a dataset.
  const hostile = 'provider said \x1b]0;pwned\x07\x1b[2J\x1b[8mhidden\u202edone';
  const shown = 'provider said hidden\\u{202e}done';

  it('without a terminal: control sequences removed, format characters shown, own colours kept', () => {
    const out = sink(false);
    const p = createProgress({ unit: 'rollouts', enabled: true, stream: out.stream });
    p.log(`\x1b[33minfra\x1b[39m ${hostile}`);
    p.detail(hostile);
    p.finish({ done: 1, total: 1, line: `[1/1] ${hostile}`, keep: true, status: hostile });
    p.stop();
    expect(out.text()).toBe(`\x1b[33minfra\x1b[39m ${shown}\n${shown}\n[1/1] ${shown}\n`);
  });

  it('on a terminal: the kept line and the status are made safe too', () => {
    const out = sink(true);
    const p = createProgress({ unit: 'rollouts', enabled: true, stream: out.stream });
    p.update(0, 2, 'starting');
    p.finish({ done: 1, total: 2, line: `[1/2] ${hostile}`, keep: true, status: `status ${hostile}` });
    p.stop();
    const text = out.text();
    expect(text).toContain(`[1/2] ${shown}`);
    expect(text).toContain(`status ${shown}`);
    expect(text).not.toContain('pwned');
    expect(text).not.toContain('\u202e');
  });
});
