export * from './config.ts';
export * from './result.ts';
export * from './rollout.ts';
export * from './summary.ts';
export * from './job.ts';
