import { describe, expect, it } from 'vitest';
import { parseRewardJson, parseRewardText, rewardPassed } from './reward.ts';

describe('reward parsing', () => {
  it('reads reward.txt numbers', () => {
    expect(parseRewardText('1\n')).toBe(1);
    expect(parseRewardText(' 0.5 ')).toBe(0.5);
    expect(parseRewardText('')).toMatch(/empty/);
    expect(parseRewardText('yes')).toMatch(/not a number/);
  });
  it('reads reward.json objects', () => {
    expect(parseRewardJson('{"reward": 1}')).toBe(1);
    expect(parseRewardJson('0')).toBe(0);
    expect(parseRewardJson('{"a": 1, "b": 0.25}')).toBe(0.25);
    expect(parseRewardJson('{"a": "x"}')).toMatch(/no numeric/);
    expect(parseRewardJson('{')).toMatch(/not JSON/);
    expect(parseRewardJson('[1]')).toMatch(/must be/);
  });
  it('passes only at full marks', () => {
    expect(rewardPassed(1)).toBe(true);
    expect(rewardPassed(0.99)).toBe(false);
  });
});
