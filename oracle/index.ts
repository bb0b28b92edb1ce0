export * from './generate.ts';
export * from './gen-gold.ts';
export * from './tracer.ts';
