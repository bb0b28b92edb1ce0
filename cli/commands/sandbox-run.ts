import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import chalk from 'chalk';
import type { Argv, CommandModule } from 'yargs';
import { AuthbenchError } from '../../core/index.ts';
import { outputNotes, outputView, isUtf8, safeText } from '../output-text.ts';
import { printJson } from '../table.ts';
import { DEFAULT_DIR_HELP, defaultDir } from '../default-dirs.ts';

interface RunArgs {
  task: string;
  tasks: string;
  policy: string;
  'oracle-traces': string;
  trace: boolean;
  events: string | undefined;
  'best-effort': boolean;
  timeout: number;
  fidelity: boolean;
  json: boolean;
  /** Everything after `--` (the root parser sets populate--). */
  '--'?: (string | number)[];
}

export const sandboxRunCommand: CommandModule<object, RunArgs> = {
  command: 'run',
  describe: "Run one command in a task's container under a policy (Landlock + seccomp), traced by strace",
  builder: (y: Argv) =>
    y
      .option('task', { describe: 'Task id or folder', type: 'string', demandOption: true })
      .option('tasks', { describe: 'Folder of task folders', type: 'string', default: defaultDir('tasks'), defaultDescription: DEFAULT_DIR_HELP['tasks'] })
      .option('policy', { describe: 'Policy file, or allow-all | deny-all | gold', type: 'string', default: 'gold' })
      .option('oracle-traces', { describe: 'Where gold lives (for --policy gold)', type: 'string', default: defaultDir('oracle-traces'), defaultDescription: DEFAULT_DIR_HELP['oracle-traces'] })
      .option('trace', { describe: 'Trace with strace (--no-trace to skip)', type: 'boolean', default: true })
      .option('events', { describe: 'Write trace events here as JSONL (default jobs/sandbox/<task>-<time>.events.jsonl)', type: 'string' })
      .option('best-effort', { describe: 'Run even if Landlock/seccomp cannot be fully applied (recorded)', type: 'boolean', default: false })
      .option('timeout', { describe: 'Seconds before the command is killed', type: 'number', default: 120 })
      .option('fidelity', { describe: 'Print the enforcement-fidelity report (where the kernel grants more than the policy)', type: 'boolean', default: false })
      .option('json', { describe: 'Print the result as JSON', type: 'boolean', default: false })
      .example('$0 sandbox run --task log-triage --policy gold -- python3 -c "print(1)"', 'Under the task gold policy')
      .example('$0 sandbox run --task sensitive-debug-bundle --policy deny-all -- cat /app/.env.prod', 'Watch a denial')
      .example('$0 sandbox run --task c-fix-build --policy my-policy.json --fidelity -- make', 'A policy file, with its fidelity report'),
  handler: async (args) => {
    const cmd = args['--']?.map(String) ?? [];
    if (cmd.length === 0) throw new AuthbenchError('INVALID_ARGUMENT', 'give the command after --, e.g. authbench sandbox run --task t -- ls /app');
    const { loadTask, resolveTaskRef } = await import('../../task-format/index.ts');
    const { connectDocker } = await import('../../docker/index.ts');
    const { buildTaskImage, openTaskSandbox } = await import('../../taskenv/index.ts');
    const { resolvePolicy, taskImplicit } = await import('../../goldstore/index.ts');
    const { renderEvent } = await import('../../sandbox/trace/index.ts');
    const { renderFidelityReport } = await import('../../sandbox/compile/index.ts');

    const task = await loadTask(await resolveTaskRef(args.tasks, args.task));
    const resolved = await resolvePolicy(args.policy, task, args['oracle-traces']);
    const engine = await connectDocker();
    const image = await buildTaskImage(engine, task);
    const { policySidecarHosts } = await import('../../sandbox/policy/index.ts');
    // The command is enforced under the policy, so it reaches only the compose sidecars the policy names.
    await using box = await openTaskSandbox(engine, task, image.tag, { bestEffort: args['best-effort'], sidecarAccess: policySidecarHosts(resolved.policy.network) });
    const result = await box.session.run({
      cmd,
      mode: { kind: 'enforce', policy: resolved.policy, implicit: taskImplicit(task) },
      trace: args.trace,
      timeoutMs: args.timeout * 1000,
    });
    if (result.launcherError !== undefined) {
      throw new AuthbenchError('SANDBOX_UNAVAILABLE', `the launcher refused to run the command: ${result.launcherError}`, {
        hint: 'the sandbox fails closed; --best-effort runs with what the kernel supports (and records it)',
      });
    }
    let eventsFile: string | undefined;
    if (args.trace) {
      eventsFile = args.events ?? join('jobs', 'sandbox', `${task.id}-${new Date().toISOString().replaceAll(':', '-')}.events.jsonl`);
      await mkdir(dirname(eventsFile), { recursive: true });
      await writeFile(eventsFile, result.events.map((e) => JSON.stringify(e)).join('\n') + (result.events.length > 0 ? '\n' : ''));
    }
    const widened = result.compiled?.fidelity.entries.filter((e) => e.kind === 'widened').length ?? 0;
    // A policy may name harness paths: accepted, but those entries are never granted (reported, not an error).
    const reserved = result.compiled?.fidelity.entries.filter((e) => e.kind === 'reserved' && e.source === 'policy') ?? [];
    process.exitCode = result.exec.exitCode ?? 124;
    // The kept bytes of each stream and how many the command wrote (the cap keeps the first ones).
    const streams = (['stdout', 'stderr'] as const).map((name) => {
      const bytes = result.rawOutput?.[name] ?? Buffer.from(result.exec[name]);
      const written = result.outputBytes?.[name] ?? bytes.length;
      return { name, bytes, written, truncated: written > bytes.length };
    });
    if (args.json) {
      printJson({
        task: task.id,
        policy: { source: resolved.source, file: resolved.file },
        exec: result.exec,
        // exec holds the text decoded; bytes that are not UTF-8 are kept here exactly, in base64.
        output: Object.fromEntries(
          streams.map((s) => {
            const utf8 = isUtf8(s.bytes, s.truncated);
            return [s.name, { bytes: s.written, kept: s.bytes.length, truncated: s.truncated, utf8, ...(utf8 ? {} : { base64: s.bytes.toString('base64') }) }];
          }),
        ),
        enforcement: result.enforcement,
        denials: result.denials,
        events: { count: result.events.length, file: eventsFile },
        fidelity: result.compiled?.fidelity,
        warnings: reserved.map((e) => `${e.axis} ${e.entry}: ${e.note}`),
      });
      return;
    }
    // The command's output is untrusted, and so is what its trace names (paths it created, process
    // names): no control sequence of it reaches the operator's terminal, no format character hides.
    const views = streams.map((s) => ({ ...s, view: outputView(s.bytes, s.truncated) }));
    for (const s of views) (s.name === 'stdout' ? process.stdout : process.stderr).write(s.view.text);
    const out = (s: string): boolean => process.stderr.write(`${s}\n`);
    out(chalk.dim('─'.repeat(60)));
    for (const s of views) for (const note of outputNotes(s.name, s.view, s.bytes.length, s.written)) out(chalk.yellow(note));
    out(`exit ${result.exec.timedOut ? 'timed out' : String(result.exec.exitCode)} in ${(result.exec.durationMs / 1000).toFixed(2)} s`);
    out(`policy ${resolved.source}${resolved.file === undefined ? '' : ` (${resolved.file})`}; enforcement ${result.enforcement.level}, Landlock ABI ${result.enforcement.landlockAbi}, seccomp ${result.enforcement.seccomp ? 'on' : 'off'}${result.enforcement.bestEffort ? ', best-effort' : ''}`);
    if (result.denials.length === 0) out(chalk.green('no denials'));
    else {
      out(chalk.red(`${result.denials.length} denial(s):`));
      for (const d of result.denials.slice(0, 30)) out(`  ${safeText(renderEvent(d))}`);
      if (result.denials.length > 30) out(chalk.dim(`  … ${result.denials.length - 30} more in the events file`));
    }
    out(`fidelity: ${widened} entr${widened === 1 ? 'y' : 'ies'} where the kernel grants more than the policy${args.fidelity ? '' : ' (--fidelity shows them)'}`);
    for (const e of reserved) out(chalk.yellow(safeText(`warning: ${e.axis} ${e.entry}: ${e.note}`)));
    if ((result.leftover?.count ?? 0) > 0) out(chalk.yellow(`${result.leftover?.count ?? 0} process(es) were still running when the command ended, and were killed`));
    if ((result.survivors?.count ?? 0) > 0) out(chalk.yellow(`${result.survivors?.count ?? 0} background process(es) the command left running were stopped when it ended: ${safeText((result.survivors?.info ?? '').replace(/\n/g, ', '))}`));
    if (args.fidelity && result.compiled !== undefined) out(renderFidelityReport(result.compiled.fidelity, { onlyDifferences: true }));
    if (eventsFile !== undefined) out(`${result.events.length} events → ${eventsFile}`);
  },
};
