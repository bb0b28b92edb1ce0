import { describe, expect, it } from 'vitest';
import { AGENT_PREFIX, getAgent, installScript, lastStep, layerDockerfile, NPM_PIN } from './index.ts';

const claude = getAgent('claude-code');

describe('the agent layer files', () => {
  it('the Dockerfile starts from the given image, copies node into the prefix and runs the install script once', () => {
    const text = layerDockerfile('sha256:abc', claude);
    const instructions = text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
    expect(instructions).toEqual([
      'FROM sha256:abc',
      `COPY node ${AGENT_PREFIX}/bin/node`,
      `COPY install.sh fetch.mjs ${AGENT_PREFIX}/install/`,
      `RUN sh ${AGENT_PREFIX}/install/install.sh`,
    ]);
  });

  it('the script refuses musl before running node, installs the pinned package as of its date, and checks npm by integrity', () => {
    const script = installScript(claude);
    const at = (s: string): number => script.indexOf(s);
    expect(at('ld-musl')).toBeGreaterThan(0);
    expect(at('ld-musl')).toBeLessThan(at('"$P/bin/node" --version'));
    expect(script).toContain(`'@anthropic-ai/claude-code@${claude.install.version}'`);
    expect(script).toContain(`--before '${claude.install.before}'`);
    expect(script).toContain(`'${NPM_PIN.tarball}' '${NPM_PIN.integrity}'`);
    // npm, its cache, HOME and TMPDIR live in a directory removed on exit.
    expect(script).toMatch(/trap 'rm -rf "\$W"' EXIT/);
    expect(script).toContain('export HOME="$W/home" TMPDIR="$W/tmp"');
    expect(script.trimEnd().split('\n').at(-1)).toBe('"$P/bin/claude" --version');
    expect(installScript(getAgent('codex')).trimEnd().split('\n').at(-1)).toBe('"$P/bin/node" "$P/bin/codex" --version');
  });

  it('finds the step a build log reached', () => {
    expect(lastStep(['Step 4/4 : RUN sh x', 'authbench-agent-step: libc', 'authbench-agent-step: node', 'v24', 'authbench-agent-step: npm', 'GET failed'])).toBe('npm');
    expect(lastStep(['authbench-agent-step: bogus', 'nothing'])).toBeUndefined();
    expect(lastStep([])).toBeUndefined();
  });
});
