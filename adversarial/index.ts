/**
 * The adversarial suite: hostile trajectories played through the real rollout
 * path, each with the outcome it must produce (scenarios.ts), judged (check.ts).
 */
export * from './scenarios.ts';
export * from './check.ts';
export * from './run.ts';
