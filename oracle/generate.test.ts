import { describe, expect, it } from 'vitest';
import { oracleFailureMessage } from './generate.ts';

describe('oracleFailureMessage', () => {
  it('is the validator failure alone when the oracle left nothing running', () => {
    const plain = 'the oracle of t fails its own utility validator (2 tests failed); no gold derived';
    expect(oracleFailureMessage('t', '2 tests failed', undefined, false)).toBe(plain);
    expect(oracleFailureMessage('t', '2 tests failed', { count: 0, info: '' }, false)).toBe(plain);
  });

  it('names the service that ran through the validator when it was kept running', () => {
    const m = oracleFailureMessage('nginx-request-logging', 'reward 0', { count: 2, info: '41 nginx\n42 nginx' }, true);
    expect(m).toBe('the oracle of nginx-request-logging fails its own utility validator (reward 0); no gold derived; the 2 process(es) it left running (41 nginx, 42 nginx) ran through the validator');
  });

  it('says plainly that the service was stopped before the validator when it could not be kept', () => {
    const m = oracleFailureMessage('nginx-request-logging', 'reward 0', { count: 2, info: '41 nginx\n42 nginx' }, false);
    expect(m).toMatch(/^the oracle of nginx-request-logging started a service: it left 2 process\(es\) running \(41 nginx, 42 nginx\), /);
    expect(m).toContain('were stopped as solve.sh ended');
    expect(m).toContain('its utility validator then failed (reward 0); no gold derived');
  });
});

describe('oracleFailureMessage under --tracer ebpf', () => {
  it('says the service was stopped because the eBPF run is untraced in the session, and what can keep it', () => {
    const m = oracleFailureMessage('nginx-request-logging', 'reward 0', { count: 1, info: '41 nginx' }, false, 'ebpf');
    expect(m).toContain('41 nginx');
    expect(m).toContain('--tracer ebpf');
    expect(m).toContain('--tracer strace can');
    expect(m).not.toContain('escaped the tracer');
  });
});
