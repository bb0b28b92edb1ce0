export * from './patterns.ts';
export * from './snapshot.ts';
export * from './executable.ts';
export * from './trust.ts';
