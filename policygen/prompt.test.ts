import { describe, expect, it } from 'vitest';
import { explorationSystemPrompt, explorationUserPrompt, POLICY_FORMAT, tighteningUserPrompt } from './prompt.ts';

const task = { instruction: '  Fix the report in /app/report.py.\n', workdir: '/app' };

describe('policy writer prompts', () => {
  it('state the Appendix A format rules the scorer applies', () => {
    for (const rule of ['"read"', '"write"', '"execute"', 'absolute POSIX path', 'one path segment', 'trailing "/**"', 'never libraries', '"network"']) {
      expect(POLICY_FORMAT).toContain(rule);
    }
    expect(explorationSystemPrompt()).toContain(POLICY_FORMAT);
    expect(explorationSystemPrompt()).toMatch(/read-only/);
    expect(explorationSystemPrompt()).toMatch(/ONLY the policy JSON/);
  });

  it.each([
    ['direct', /least-privilege policy/],
    ['sufficiency-tightness', /SUFFICIENT/],
  ] as const)('%s: the first message carries the trimmed instruction and the workdir', (strategy, ask) => {
    const text = explorationUserPrompt(task, strategy);
    expect(text).toMatch(ask);
    expect(text).toContain('<task_instruction>\nFix the report in /app/report.py.\n</task_instruction>');
    expect(text).toContain('working directory is /app');
  });

  it('shows a parsed draft as pretty JSON and an unparsed one raw, flagged', () => {
    const parsed = tighteningUserPrompt(task, { raw: 'ignored', policy: { read: ['/app/**'], write: [], execute: ['/usr/bin/python3'] } });
    expect(parsed).toContain('<draft_policy>\n{\n  "read": [\n    "/app/**"');
    expect(parsed).not.toContain('ignored');
    const raw = tighteningUserPrompt(task, { raw: ' not json at all ' });
    expect(raw).toContain('<draft_policy note="did not parse as a valid policy">\nnot json at all\n</draft_policy>');
  });
});
