export * from './generate.ts';
export * from './artifacts.ts';
export * from './policy-source.ts';
