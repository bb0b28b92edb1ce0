export * from './errors.ts';
export * from './env.ts';
export * from './hash.ts';
export * from './fs.ts';
export * from './zod-error.ts';
export * from './version.ts';
export * from './pool.ts';
export * from './random.ts';
