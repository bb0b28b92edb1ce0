export * from './access.ts';
export * from './fidelity.ts';
export * from './compile.ts';
export * from './model.ts';
export * from './fidelity-probe.ts';
export * from './reserved.ts';
