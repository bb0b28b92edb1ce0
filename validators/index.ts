export * from './reward.ts';
export * from './run.ts';
export * from './verify.ts';
