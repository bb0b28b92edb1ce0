import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yargs, { type CommandModule } from 'yargs';
import { afterAll, describe, expect, it } from 'vitest';
import { AuthbenchError } from '../core/index.ts';
import { hostAccessLine, parseBuildFlags, withBuildFlags, type BuildFlagArgs } from './build-flags.ts';
import { baseCommand } from './commands/base.ts';
import { buildCommand } from './commands/build.ts';
import { evalCommand } from './commands/eval.ts';
import { genGoldCommand } from './commands/gen-gold.ts';
import { policyCommand } from './commands/policy.ts';
import { scoreCommand } from './commands/score.ts';
import { verifyCommand } from './commands/verify.ts';

async function parse(argv: string[]): Promise<{ task: string[]; 'base-map'?: string | string[]; 'build-arg'?: string | string[] }> {
  const y = withBuildFlags(yargs(argv).strict().positional('task', { type: 'string', array: true }).command('build [task..]', 'b'));
  return (await y.parseAsync()) as never;
}

/** The arguments a real command's handler would get (the handler itself replaced). */
async function parseCommand(command: CommandModule<object, object>, argv: string[]): Promise<Record<string, unknown> & BuildFlagArgs> {
  let got: Record<string, unknown> | undefined;
  const capture = (args: object): void => void (got = args as Record<string, unknown>);
  // `base build` is a subcommand: its parent's builder registers it, so the capture goes one level down.
  const module =
    command === baseCommand
      ? { ...command, builder: (y: ReturnType<typeof yargs>) => y.command({ ...(buildSubcommand()), handler: capture }) }
      : { ...command, handler: capture };
  await yargs().strict().exitProcess(false).command(module as CommandModule<object, object>).parseAsync(argv);
  if (got === undefined) throw new Error(`no handler ran for ${argv.join(' ')}`);
  return got;
}

/** `base build` as its parent registers it. */
function buildSubcommand(): CommandModule<object, object> {
  let sub: CommandModule<object, object> | undefined;
  const recorder = { command: (c: CommandModule<object, object>) => ((sub = c), recorder), demandCommand: () => recorder, example: () => recorder };
  (baseCommand.builder as (y: unknown) => unknown)(recorder);
  if (sub === undefined) throw new Error('base registers no subcommand');
  return sub;
}

describe('build flags', () => {
  it('repeat without swallowing the positionals after them', async () => {
    const args = await parse(['build', '--base-map', 'node:*=img:1', 'task-a', '--base-map', 'ruby:*=img:2', '--build-arg', 'A=b=c', 'task-b']);
    expect(args.task).toEqual(['task-a', 'task-b']);
    expect(await parseBuildFlags(args, {})).toEqual({
      baseMapEntries: [
        { pattern: 'node:*', image: 'img:1' },
        { pattern: 'ruby:*', image: 'img:2' },
      ],
      buildArgs: { A: 'b=c' },
    });
  });

  it('are optional, and a malformed one is INVALID_ARGUMENT naming the flag', async () => {
    expect(await parseBuildFlags({}, {})).toEqual({ baseMapEntries: [], buildArgs: {} });
    for (const [flags, flag] of [
      [{ 'base-map': 'node:*' }, '--base-map'],
      [{ 'build-arg': '=x' }, '--build-arg'],
    ] as const) {
      const failure = await parseBuildFlags(flags, {}).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(AuthbenchError);
      expect((failure as AuthbenchError).message).toContain(flag);
    }
  });

  // Every command that builds takes the same flags, and none of them eats the positional after it.
  it.each([
    ['build', buildCommand, ['build', '--base-map', 'a=b', 'task-x', '--build-arg', 'K=V', 'task-y'], { task: ['task-x', 'task-y'] }],
    ['base build', baseCommand, ['base', 'build', '--base-map', 'a=b', '--build-arg', 'K=V', '--dataset', 'ds'], { dataset: 'ds' }],
    ['verify', verifyCommand, ['verify', '--base-map', 'a=b', 'task-x', '--build-arg', 'K=V', 'task-y'], { task: ['task-x', 'task-y'] }],
    ['gen-gold', genGoldCommand, ['gen-gold', '--base-map', 'a=b', 'task-x', '--build-arg', 'K=V', 'task-y'], { task: ['task-x', 'task-y'] }],
    ['policy', policyCommand, ['policy', '--model', 'scripted/gold', '--base-map', 'a=b', '--build-arg', 'K=V', 'task-x'], { task: 'task-x' }],
    ['score', scoreCommand, ['score', '--task', 't', '--base-map', 'a=b', '--build-arg', 'K=V', '--policy', 'p.json'], { task: 't', policy: ['p.json'] }],
    ['eval', evalCommand, ['eval', '--model', 'scripted/oracle', '--base-map', 'a=b', '--include', 'x*', 'task-x', '--build-arg', 'K=V', '--policy', 'gold', 'task-y'], { include: 'x*', policy: 'gold', task: ['task-x', 'task-y'] }],
  ] as const)('%s takes --base-map/--build-arg/--build-ca/--build-proxy-from-env and keeps its positionals', async (_name, command, argv, expected) => {
    const args = await parseCommand(command, [...argv, '--build-ca', 'ca.pem', '--build-proxy-from-env']);
    expect(args).toMatchObject({ ...expected, 'base-map': 'a=b', 'build-arg': 'K=V', 'build-ca': 'ca.pem', 'build-proxy-from-env': true });
    const { 'build-ca': _ca, ...withoutCa } = args;
    expect((await parseBuildFlags({ ...withoutCa, 'build-proxy-from-env': false }, {})).baseMapEntries).toEqual([{ pattern: 'a', image: 'b' }]);
  });
});

describe('host access for builds', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ab-flags-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const cert = '-----BEGIN CERTIFICATE-----\nMIIBmarker\n-----END CERTIFICATE-----';
  const file = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it('reads the CA from --build-ca, else $AUTHBENCH_BUILD_CA, certificates only', async () => {
    const flagged = file('flag.pem', `# corp\n${cert}\n`);
    const fromEnv = file('env.pem', cert.replace('marker', 'fromenv'));
    expect((await parseBuildFlags({ 'build-ca': flagged }, { AUTHBENCH_BUILD_CA: fromEnv })).hostAccess).toEqual({ caBundle: `${cert}\n` });
    expect((await parseBuildFlags({}, { AUTHBENCH_BUILD_CA: fromEnv })).hostAccess?.caBundle).toContain('fromenv');
  });

  it('refuses a missing file, a key, or two --build-ca, naming the problem', async () => {
    const cases: [BuildFlagArgs, string][] = [
      [{ 'build-ca': join(dir, 'missing.pem') }, 'missing.pem'],
      [{ 'build-ca': file('key.pem', `${cert}\n-----BEGIN EC PRIVATE KEY-----\nx\n-----END EC PRIVATE KEY-----\n`) }, 'private key'],
      [{ 'build-ca': ['a.pem', 'b.pem'] }, 'more than once'],
    ];
    for (const [args, text] of cases) {
      const failure = await parseBuildFlags(args, {}).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(AuthbenchError);
      expect((failure as AuthbenchError).code).toBe('INVALID_ARGUMENT');
      expect(`${(failure as AuthbenchError).file ?? ''} ${(failure as AuthbenchError).message}`).toContain(text);
    }
  });

  it('passes the host proxies only when asked (opt-in), and refuses the flag with none set', async () => {
    const env = { https_proxy: 'http://proxy.corp:3128', NO_PROXY: '.corp' };
    expect((await parseBuildFlags({}, env)).hostAccess).toBeUndefined();
    expect((await parseBuildFlags({ 'build-proxy-from-env': true }, env)).hostAccess).toEqual({
      proxy: { HTTPS_PROXY: 'http://proxy.corp:3128', https_proxy: 'http://proxy.corp:3128', NO_PROXY: '.corp', no_proxy: '.corp' },
    });
    const failure = await parseBuildFlags({ 'build-proxy-from-env': true }, {}).catch((e: unknown) => e);
    expect((failure as AuthbenchError).message).toContain('HTTPS_PROXY');
  });

  it('are summed up by name, never by value', () => {
    expect(hostAccessLine([undefined])).toBeUndefined();
    const line = hostAccessLine([
      { caBundle: true, proxy: ['HTTPS_PROXY', 'https_proxy'], runsWithCa: 3, runsWithoutCa: [] },
      undefined,
      { caBundle: false, proxy: ['NO_PROXY', 'no_proxy'], runsWithCa: 0, runsWithoutCa: ['line 4: RUN in SHELL ["pwsh"], not a POSIX shell'] },
    ]);
    expect(line).toBe(
      '2 build(s) got the build CA and proxies (HTTPS_PROXY, NO_PROXY) for their RUN steps (3 with the CA); none of it is kept in the images; without the CA: line 4: RUN in SHELL ["pwsh"], not a POSIX shell',
    );
  });
});
