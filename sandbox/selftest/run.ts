import { BASE_IMAGE_REF, type Container, type Engine, type ExecResult } from '../../docker/index.ts';
import {
  ensureLauncher,
  installLauncher,
  launcherArgv,
  parseLauncherReport,
  serializeRules,
  type LauncherReport,
} from '../launcher/index.ts';
import { AuthbenchError } from '../../core/index.ts';
import {
  ABSTRACT_SOCKET,
  LISTEN_PORT,
  SELFTEST_ROOT,
  SLEEPER_PID_FILE,
  allProbes,
  baseSetup,
  type Expectation,
  type Observed,
  type Probe,
  type ProbeMode,
} from './probes.ts';

/** The image probes run in: python3, perl-base and coreutils are all they need. */
export const SELFTEST_IMAGE = BASE_IMAGE_REF;

/**
 * The probe container is deliberately more privileged than a task container
 * (no Docker seccomp profile, CAP_SYS_ADMIN): every denial must then come from
 * the launcher, and the controls show each action really is possible without it.
 */
const SELFTEST_CONTAINER = {
  image: SELFTEST_IMAGE,
  network: 'none',
  securityOpt: ['seccomp=unconfined'],
  capAdd: ['SYS_ADMIN'],
  labels: { 'authbench.kind-detail': 'sandbox-selftest' },
} as const;

const PROBE_TIMEOUT_MS = 30_000;
const RULES_DIR = `${SELFTEST_ROOT}/rules`;
const REPORT_PATH = `${SELFTEST_ROOT}/report.json`;
const SETUP_FAILED = 'ab-selftest: setup failed';

export interface SelftestRow {
  id: string;
  mode: ProbeMode;
  expected: Exclude<Observed, 'error'>;
  observed: Observed;
  ok: boolean;
  /** The probe's marker line or the last stderr line: what the verdict rests on. */
  detail: string;
  /** True when the allow run was a control outside the launcher. */
  control: boolean;
}

export interface SelftestResult {
  rows: SelftestRow[];
  report: LauncherReport;
  launcherPath: string;
}

export interface SelftestOptions {
  onProbe?: (row: SelftestRow) => void;
  /** Run only these probes (default: all). */
  probes?: readonly Probe[];
  onProgress?: (line: string) => void;
}

/** Decide from a finished probe whether the action was allowed, denied, or the probe broke. Pure. */
export function classify(
  expectation: Expectation,
  result: Pick<ExecResult, 'exitCode' | 'stdout' | 'stderr' | 'timedOut'>,
): { observed: Observed; detail: string } {
  const lastStderr = result.stderr.trim().split('\n').at(-1) ?? '';
  if (result.timedOut) return { observed: 'error', detail: 'timed out' };
  switch (expectation.kind) {
    case 'marker': {
      const line = result.stdout.split('\n').find((l) => /^AB_(ALLOWED|DENIED|ERROR)/.test(l));
      if (line?.startsWith('AB_ALLOWED') === true) return { observed: 'allowed', detail: line };
      if (line?.startsWith('AB_DENIED') === true) return { observed: 'denied', detail: line };
      return { observed: 'error', detail: line ?? `exit ${result.exitCode}: ${lastStderr}` };
    }
    case 'exit': {
      if (result.exitCode === 0) return { observed: 'allowed', detail: 'exit 0' };
      const denied = new RegExp(expectation.deniedStderr).test(result.stderr);
      return { observed: denied ? 'denied' : 'error', detail: `exit ${result.exitCode}: ${lastStderr}` };
    }
  }
}

const rulesPath = (probe: Probe, mode: ProbeMode): string => `${RULES_DIR}/${probe.id}.${mode}.rules`;

/** argv of one run: under the launcher, or bare for a control; wrapped when the probe inherits an fd. Pure. */
export function probeArgv(probe: Probe, mode: ProbeMode): string[] {
  const control = mode === 'allow' && probe.allowRules === 'control';
  const inner = control ? [...probe.argv] : launcherArgv({ rulesPath: rulesPath(probe, mode), cmd: probe.argv });
  if (probe.inheritFd === undefined) return inner;
  const { fd, path } = probe.inheritFd;
  return ['sh', '-c', `exec ${fd}>>"$0"; exec "$@"`, path, ...inner];
}

function globalSetup(): string {
  const listener = [
    'import socket, time',
    's = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)',
    `s.bind(("127.0.0.1", ${LISTEN_PORT})); s.listen(64)`,
    `u = socket.socket(socket.AF_UNIX); u.bind("\\0${ABSTRACT_SOCKET}"); u.listen(64)`,
    `open("${SELFTEST_ROOT}/ready", "w").close()`,
    'time.sleep(3600)',
  ].join('\n');
  return [
    'set -e',
    `mkdir -p ${RULES_DIR}`,
    `sleep 3600 >/dev/null 2>&1 </dev/null & echo $! > ${SLEEPER_PID_FILE}`,
    `python3 -c '${listener}' >/dev/null 2>&1 </dev/null &`,
    `for i in $(seq 200); do [ -f ${SELFTEST_ROOT}/ready ] && exit 0; sleep 0.05; done; echo "listener did not start" >&2; exit 1`,
  ].join('\n');
}

async function sh(container: Container, script: string, what: string): Promise<void> {
  const r = await container.exec({ cmd: ['sh', '-c', script], timeoutMs: PROBE_TIMEOUT_MS });
  if (r.exitCode !== 0) {
    throw new AuthbenchError('INTERNAL', `sandbox self-test: ${what} failed (exit ${r.exitCode})`, {
      details: r.stderr.trim().split('\n').slice(-5),
    });
  }
}

async function launcherReport(container: Container): Promise<LauncherReport> {
  const rules = serializeRules({
    fs: [{ path: '/usr', access: ['execute', 'read_file', 'read_dir'] }],
    connectTcp: [],
    bindTcp: [],
    socketDomains: [],
    scope: ['signal', 'abstract-unix'],
  });
  await container.putFiles(RULES_DIR, { 'report.rules': rules });
  // best-effort, so an older kernel still says what it can enforce instead of refusing.
  const argv = launcherArgv({ rulesPath: `${RULES_DIR}/report.rules`, reportPath: REPORT_PATH, bestEffort: true, cmd: ['true'] });
  const r = await container.exec({ cmd: argv, timeoutMs: PROBE_TIMEOUT_MS });
  const text = await container.readFile(REPORT_PATH);
  if (text === undefined) {
    throw new AuthbenchError('SANDBOX_UNAVAILABLE', `the launcher wrote no report (exit ${r.exitCode})`, {
      details: r.stderr.trim().split('\n').slice(-3),
    });
  }
  return parseLauncherReport(text.toString('utf8'), REPORT_PATH);
}

/** Run every probe under deny and allow rules in a fresh container; misbehaving probes are rows with ok=false. */
export async function runSelftest(engine: Engine, options: SelftestOptions = {}): Promise<SelftestResult> {
  const probes = options.probes ?? allProbes();
  const launcherPath = await ensureLauncher(engine, options.onProgress === undefined ? {} : { onProgress: options.onProgress });
  const container = await engine.startContainer({
    ...SELFTEST_CONTAINER,
    securityOpt: [...SELFTEST_CONTAINER.securityOpt],
    capAdd: [...SELFTEST_CONTAINER.capAdd],
  });
  try {
    await installLauncher(container, launcherPath);
    await sh(container, globalSetup(), 'global setup');
    const report = await launcherReport(container);

    const files: Record<string, string> = {};
    for (const probe of probes) {
      files[`${probe.id}.deny.rules`] = serializeRules(probe.denyRules);
      if (probe.allowRules !== 'control') files[`${probe.id}.allow.rules`] = serializeRules(probe.allowRules);
    }
    await container.putFiles(RULES_DIR, files);

    const rows: SelftestRow[] = [];
    for (const probe of probes) {
      for (const mode of ['deny', 'allow'] as const) {
        const setup = mode === 'allow' && probe.allowSetup !== undefined ? probe.allowSetup : probe.setup;
        // One exec per run: the setup (unsandboxed) then exec of the probe argv.
        const script = `( set -e\n${[...baseSetup(probe.id), ...setup].join('\n')}\n) || { echo "${SETUP_FAILED}" >&2; exit 99; }\nexec "$@"`;
        const result = await container.exec({
          cmd: ['sh', '-c', script, 'sh', ...probeArgv(probe, mode)],
          timeoutMs: PROBE_TIMEOUT_MS,
        });
        const { observed, detail } = result.stderr.includes(SETUP_FAILED)
          ? { observed: 'error' as const, detail: `setup failed: ${result.stderr.trim()}` }
          : classify(probe.expectation, result);
        const expected = mode === 'deny' ? 'denied' : 'allowed';
        const row: SelftestRow = {
          id: probe.id,
          mode,
          expected,
          observed,
          ok: observed === expected,
          detail,
          control: mode === 'allow' && probe.allowRules === 'control',
        };
        rows.push(row);
        options.onProbe?.(row);
      }
    }
    return { rows, report, launcherPath };
  } finally {
    await container.remove();
  }
}

export interface SelftestSummary {
  probes: number;
  deniedUnderDeny: number;
  falseDenials: number;
  failures: number;
}

export function summarize(rows: readonly SelftestRow[]): SelftestSummary {
  const deny = rows.filter((r) => r.mode === 'deny');
  const allow = rows.filter((r) => r.mode === 'allow');
  return {
    probes: new Set(rows.map((r) => r.id)).size,
    deniedUnderDeny: deny.filter((r) => r.observed === 'denied').length,
    falseDenials: allow.filter((r) => r.observed !== 'allowed').length,
    failures: rows.filter((r) => !r.ok).length,
  };
}
