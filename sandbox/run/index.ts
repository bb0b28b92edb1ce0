export * from './session.ts';
export * from './patch.ts';
