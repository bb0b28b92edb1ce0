export * from './reward.ts';
export * from './run.ts';
export * from './verify.ts';
export * from './pytest.ts';
export * from './junit.ts';
export * from './surface.ts';
export * from './artifacts.ts';
