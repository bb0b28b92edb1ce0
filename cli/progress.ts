/**
 * Job progress on stderr. On a terminal: one bar that updates in place
 * (cli-progress) with the running counts, and only the lines worth keeping
 * (failures, infrastructure errors) printed above it. Anywhere else (CI logs,
 * pipes): one plain line per event, as before, so logs stay greppable.
 */
import chalk from 'chalk';
import cliProgress from 'cli-progress';
import { safeLine } from './output-text.ts';

export interface Progress {
  /** Move the bar to `done` of `total`; `status` says what just happened. */
  update(done: number, total: number, status: string): void;
  /** A line to keep (above the bar on a terminal). */
  log(line: string): void;
  /** A line only worth showing without a bar (per-item chatter). */
  detail(line: string): void;
  /** One item finished: its line is kept when it needs a look (`keep`), the bar moves to `done`. */
  finish(item: { done: number; total: number; line: string; keep: boolean; status: string }): void;
  stop(): void;
}

/** `[3/10] ok   name` / `[3/10] FAIL name`: the per-item line every command prints. */
export function itemLine(done: number, total: number, ok: boolean, text: string): string {
  return `${chalk.dim(`[${done}/${total}]`)} ${ok ? chalk.green('ok  ') : chalk.red('FAIL')} ${text}`;
}

function withFinish(p: Omit<Progress, 'finish'>): Progress {
  return {
    ...p,
    finish: ({ done, total, line, keep, status }) => {
      if (keep) p.log(line);
      else p.detail(line);
      p.update(done, total, status);
    },
  };
}

export interface ProgressOptions {
  /** What is counted, plural ("rollouts"). */
  unit: string;
  /** Off: print nothing at all (e.g. --json). */
  enabled: boolean;
  stream?: NodeJS.WriteStream;
}

/**
 * Every line and status goes through safeLine: they name rollouts and tasks and carry messages
 * from containers, build logs and model endpoints, which must not drive the operator's terminal.
 */
function sanitized(p: Progress): Progress {
  return {
    update: (done, total, status) => p.update(done, total, safeLine(status)),
    log: (line) => p.log(safeLine(line)),
    detail: (line) => p.detail(safeLine(line)),
    finish: (item) => p.finish({ ...item, line: safeLine(item.line), status: safeLine(item.status) }),
    stop: () => p.stop(),
  };
}

const silent: Progress = withFinish({ update: () => undefined, log: () => undefined, detail: () => undefined, stop: () => undefined });

export function createProgress(options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr;
  if (!options.enabled) return silent;
  if (stream.isTTY !== true) {
    return sanitized(withFinish({ update: () => undefined, log: (line) => stream.write(`${line}\n`), detail: (line) => stream.write(`${line}\n`), stop: () => undefined }));
  }
  const multi = new cliProgress.MultiBar(
    {
      stream,
      format: ` {bar} {value}/{total} ${options.unit} | {duration_formatted} elapsed, ~{eta_formatted} left | {status}`,
      hideCursor: true,
      clearOnComplete: false,
      etaBuffer: 30,
      autopadding: true,
      // Leaves room for the counts on an 80-column terminal (cli-progress crops the line to the width).
      barsize: 24,
    },
    cliProgress.Presets.shades_classic,
  );
  let bar: cliProgress.SingleBar | undefined;
  return sanitized(withFinish({
    update: (done, total, status) => {
      if (bar === undefined) bar = multi.create(total, done, { status });
      else {
        bar.setTotal(total);
        bar.update(done, { status });
      }
    },
    log: (line) => {
      if (bar === undefined) {
        stream.write(`${line}\n`);
        return;
      }
      // cli-progress prints logged lines at its next redraw; redraw now so none is lost at stop.
      multi.log(`${line}\n`);
      multi.update();
    },
    detail: () => undefined,
    stop: () => multi.stop(),
  }));
}
