export * from './family.ts';
export * from './kit.ts';
export * from './manifest.ts';
export { buildScenario, diffSuite, generateSuite, writeSuite, type SuiteDifference, selectFamilies, GENERATOR_VERSION, STAGE_CYCLE, type GeneratedSuite, type SuiteOptions } from './generate.ts';
export { renderFamilyBase, renderScenario, contentHash, BASES_DIR } from './render.ts';
export { FAMILIES, SUITE_FAMILIES } from './families/index.ts';
export { drawFor } from './draw.ts';
export { checkIntegrity, scanText, isReservedHost, INTEGRITY_RULES, SYNTHETIC_CANARY, type IntegrityFinding, type IntegrityRule, type TaskFileText } from './integrity.ts';
