/**
 * Harbor verifiers report through /logs/verifier/reward.txt (a number) or
 * reward.json (an object of numbers). Pure parsing of those files.
 */
export type RewardSource = 'reward.txt' | 'reward.json' | 'exit-code';

export interface Reward {
  value: number;
  source: RewardSource;
}

/** A reward counts as success only at full marks: AuthBench's TSR is pass/fail. */
export const PASS_THRESHOLD = 1;

export function parseRewardText(text: string): number | string {
  const trimmed = text.trim();
  if (trimmed === '') return 'reward.txt is empty';
  const value = Number(trimmed);
  if (!Number.isFinite(value)) return `reward.txt is not a number: ${JSON.stringify(trimmed.slice(0, 40))}`;
  return value;
}

export function parseRewardJson(text: string): number | string {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    return `reward.json is not JSON: ${(e as Error).message}`;
  }
  if (typeof data === 'number') return data;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return 'reward.json must be a number or an object';
  const record = data as Record<string, unknown>;
  if (typeof record['reward'] === 'number') return record['reward'];
  const numbers = Object.values(record).filter((v): v is number => typeof v === 'number');
  if (numbers.length === 0) return 'reward.json has no numeric reward';
  // Several named rewards: success means every one is at full marks, so report the minimum.
  return Math.min(...numbers);
}

export function rewardPassed(value: number): boolean {
  return value >= PASS_THRESHOLD;
}

/** The named numeric parts of a reward.json object (e.g. `task`, `recovery`); empty for a bare number or reward.txt. */
export function rewardComponents(text: string): Record<string, number> {
  try {
    const data: unknown = JSON.parse(text);
    if (data === null || typeof data !== 'object' || Array.isArray(data)) return {};
    return Object.fromEntries(Object.entries(data as Record<string, unknown>).filter((e): e is [string, number] => typeof e[1] === 'number'));
  } catch {
    return {};
  }
}
