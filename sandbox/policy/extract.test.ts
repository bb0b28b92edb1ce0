import { describe, expect, it } from 'vitest';
import { extractPolicyFromModelOutput } from './extract.ts';
import type { ExtractionStatus } from './extract.ts';

const POLICY = { read: ['/app/in.txt'], write: ['/app/out.txt'], execute: ['/usr/bin/python3'] };
const JSON_TEXT = JSON.stringify(POLICY, null, 2);

describe('extractPolicyFromModelOutput', () => {
  const cases: [string, string, ExtractionStatus, boolean][] = [
    ['whole output is JSON', JSON_TEXT, 'strict', true],
    ['whitespace around JSON', `\n  ${JSON_TEXT}\n\n`, 'strict', true],
    ['json fence after prose', `Here is the policy:\n\n\`\`\`json\n${JSON_TEXT}\n\`\`\`\nDone.`, 'fenced', true],
    ['bare fence', `\`\`\`\n${JSON_TEXT}\n\`\`\``, 'fenced', true],
    ['last parsable fence wins', `\`\`\`json\n{"read":["/draft"],"write":[],"execute":[]}\n\`\`\`\nRevised:\n\`\`\`json\n${JSON_TEXT}\n\`\`\``, 'fenced', true],
    ['prose then JSON', `I explored the task. The policy is ${JSON_TEXT} and that is all.`, 'prefixed', true],
    ['braces inside strings', `Policy: {"read":["/app/{x}"],"write":[],"execute":[]}`, 'prefixed', true],
    ['policy-like object preferred over another object', `Given {"task": 1} I propose ${JSON_TEXT}`, 'prefixed', true],
    ['trailing commas', '{"read":["/app/in.txt",],"write":["/app/out.txt"],"execute":["/usr/bin/python3"],}', 'repaired', true],
    ['single quotes', "{'read':['/app/in.txt'],'write':['/app/out.txt'],'execute':['/usr/bin/python3']}", 'repaired', true],
    ['comments in a fence', `\`\`\`json\n{\n  // inputs\n  "read": ["/app/in.txt"],\n  "write": ["/app/out.txt"], /* outputs */\n  "execute": ["/usr/bin/python3"]\n}\n\`\`\``, 'repaired', true],
    ['no JSON at all', 'I cannot produce a policy for this task.', 'invalid', false],
    ['empty output', '', 'invalid', false],
  ];
  it.each(cases)('%s -> %s', (_name, raw, status, valid) => {
    const r = extractPolicyFromModelOutput(raw);
    expect(r.status).toBe(status);
    expect(r.valid).toBe(valid);
    if (valid) expect(r.policy?.read.length).toBeGreaterThan(0);
    else expect(r.problems.length).toBeGreaterThan(0);
  });

  it('returns the policy read, normalised', () => {
    const r = extractPolicyFromModelOutput(`\`\`\`json\n{"read":["/app//in.txt"],"write":[],"execute":[]}\n\`\`\``);
    expect(r.policy).toEqual({ read: ['/app/in.txt'], write: [], execute: [] });
    expect(r.json).toContain('/app//in.txt');
  });

  it('keeps extraction and validity apart: strict JSON that is not a valid policy', () => {
    const r = extractPolicyFromModelOutput('{"read":["relative"],"write":[],"execute":[],"extra":1}', 'gen.txt');
    expect(r.status).toBe('strict');
    expect(r.valid).toBe(false);
    expect(r.problems.every((p) => p.file === 'gen.txt')).toBe(true);
    expect(r.problems.some((p) => p.message.includes('extra'))).toBe(true);
  });
});
