/**
 * The docker module: containers, image builds (with base-image substitution),
 * offline base images and cleanup. Callers code against `Engine`/`Container`;
 * dockerode never leaks out of this directory.
 */
export * from './types.ts';
export { connectDocker, parseDockerHost, DockerEngine } from './engine.ts';
export type { ConnectOptions, DockerEndpoint } from './engine.ts';
export { EngineSpecSchema, checkDistinctEngines, checkEngineSupported, connectEngines, engineSupport, parseEngineSpec } from './engines.ts';
export type { EngineLane, EngineSpec } from './engines.ts';
export { DaemonGate, waitForDaemon } from './wait.ts';
export { engineDiskFree } from './disk.ts';
export type { EngineDiskFree } from './disk.ts';
export type { DaemonWaitOptions } from './wait.ts';
export { DEFAULT_OUTPUT_CAP_BYTES } from './exec.ts';
export { DEFAULT_CLOSE_GRACE_MS } from './attach.ts';
export {
  BaseMapEntrySchema,
  BaseMapFileSchema,
  BaseMapModeSchema,
  matchBaseMap,
  normalizeImageRef,
  parseBaseMapFlag,
  substituteBaseImages,
} from './base-map.ts';
export type { BaseMapEntry, BaseMapFile, BaseMapMode, SubstitutionResult } from './base-map.ts';
export { loadBaseMap, DEFAULT_BASE_MAP_FILE } from './base-map-config.ts';
export type { BaseMap } from './base-map-config.ts';
export { taskImageRepository, refOrigin } from './build.ts';
export {
  BASE_IMAGE_REF,
  BASE_RECIPE,
  OFFLINE_BASES,
  ensureBaseImages,
  mirrorFromAptSources,
  offlineBaseRef,
  recipeHash,
  resolveMirror,
} from './base-images.ts';
export type { EnsureBaseOptions, EnsureBaseResult, OfflineBaseRecipe } from './base-images.ts';
export { findDatasetRoot, listDatasetRecipes } from './dataset-bases.ts';
export type { DatasetRecipe } from './dataset-bases.ts';
export { buildDatasetBases } from './dataset-build.ts';
export type { DatasetBaseRow, DatasetBuildOptions } from './dataset-build.ts';
export { formatSubstitution, requestedImageFacts } from './image-facts.ts';
export type { ImageFacts, SubstitutionRecord } from './image-facts.ts';
export type { Translation } from './heredoc.ts';
export { BUILD_CA_ARG, PROXY_VARIABLES, certificatesOf, proxyBuildArgs } from './build-host.ts';
export type { BuildHostAccess, BuildHostRecord } from './build-host.ts';
export { assertCleanSucceeded, cleanManaged, staleImages } from './clean.ts';
export type { CleanOptions, CleanReport, CleanedContainer, CleanedImage, KeptResource } from './clean.ts';
export { currentOwner, lookupProcess, newRunId, ownerLabels, ownerState } from './owner.ts';
export type { OwnerState, ProcessInfo, ProcessOwner } from './owner.ts';
export { ARCHIVE_MAX_BYTES, READ_FILE_MAX_BYTES } from './archive.ts';
export { readiness, startSidecars, waitReady } from './sidecars.ts';
export { planSidecarNetworks, type NetworkedService, type SidecarNetworkPlan } from './sidecar-networks.ts';
export type { ReadyCondition, Readiness, SidecarGroup, SidecarPlan, SidecarSpec, WaitOptions } from './sidecars.ts';
export { EGRESS_PROXY_HOST, EGRESS_PROXY_PORT, EgressDecisionSchema, EgressRuleSchema, egressProxyCommand, egressProxyEnv, parseEgressLog, startEgressProxy } from './egress-proxy.ts';
export type { EgressDecision, EgressProxy, EgressProxyPlan, EgressRule } from './egress-proxy.ts';
