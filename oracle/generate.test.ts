import { describe, expect, it } from 'vitest';
import { oracleFailureMessage } from './generate.ts';

describe('oracleFailureMessage', () => {
  it('is the validator failure alone when the oracle left nothing running', () => {
    const plain = 'the oracle of t fails its own utility validator (2 tests failed); no gold derived';
    expect(oracleFailureMessage('t', '2 tests failed', undefined)).toBe(plain);
    expect(oracleFailureMessage('t', '2 tests failed', { count: 0, info: '' })).toBe(plain);
  });

  it('says plainly that the oracle started a service, which gen-gold does not support yet', () => {
    const m = oracleFailureMessage('nginx-request-logging', 'reward 0', { count: 2, info: '41 nginx\n42 nginx' });
    expect(m).toMatch(/^the oracle of nginx-request-logging started a service: it left 2 process\(es\) running \(41 nginx, 42 nginx\), /);
    expect(m).toContain('its utility validator then failed (reward 0); no gold derived.');
    expect(m).toMatch(/services the oracle starts are not supported by gen-gold yet$/);
  });
});
