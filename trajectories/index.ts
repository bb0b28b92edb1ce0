export * from './schema.ts';
export * from './actions.ts';
export * from './import.ts';
export * from './export.ts';
export * from './replay.ts';
