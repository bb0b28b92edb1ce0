export * from './generate.ts';
export * from './gen-gold.ts';
