export * from './generate.ts';
export * from './artifacts.ts';
