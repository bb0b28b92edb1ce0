export { AXES, emptyAxes, mapAxes, sortUnique, subtractAxes, unionAxes, type Axis, type AxisLists } from './axes.ts';
export { DEFAULT_IMPLICIT_RULES, defaultImplicit, invalidImplicitRules, mergeImplicit, type ImplicitRule } from './implicit.ts';
export { DEFAULT_EXECUTE_ROOTS, denialOf, deriveGold, objectStoreOf, renderDenial, type Denial, type DeriveContext, type Derivation } from './derive.ts';
export { reviewedPaths } from './instruction.ts';
export { buildGold, goldPolicy, type BuildGoldOptions, type GoldSets, type TraceProvenance } from './build.ts';
export { nameSidecarEndpoints } from './sidecar-hosts.ts';
export {
  AxisListsSchema,
  DERIVATION_RULES_VERSION,
  EndpointSchema,
  GOLD_SCHEMA_VERSION,
  GoldFileSchema,
  GoldNetworkSchema,
  MinimalSchema,
  ProvenanceSchema,
  canonicalGold,
  emptyNetwork,
  endpointKey,
  parseGold,
  serializeGold,
  type Endpoint,
  type GoldCheck,
  type GoldFile,
  type GoldNetwork,
  type Minimal,
  type Provenance,
} from './schema.ts';
export { flakyCount, mergeRuns } from './stability.ts';
export { OverridesSchema, applyOverrides, overridesHash, parseOverrides, type AppliedOverrides, type Overrides, type OverridesCheck } from './overrides.ts';
export { DIFFED_SETS, diffGold, isDrift, renderGoldDiff, type Change, type DiffedSet, type GoldDiff } from './diff.ts';
export { goldToSpec, specDisagreements, specToGold, type SpecDisagreement } from './spec.ts';
export {
  goldEntries,
  minimize,
  withMinimal,
  type GoldEntry,
  type MinimizeOptions,
  type MinimizeProgress,
  type MinimizeResult,
} from './minimize.ts';
