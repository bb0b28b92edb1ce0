/**
 * Every environment variable authbench reads is named here and nowhere else,
 * so a flag and the code that honours it can never disagree on the name.
 */
export const ENV = {
  /** Docker socket or URL (standard Docker variable; dockerode honours it too). */
  DOCKER_HOST: 'DOCKER_HOST',
  /** Set by CI systems; switches off interactive progress. */
  CI: 'CI',
  /** Disable colour (https://no-color.org). */
  NO_COLOR: 'NO_COLOR',
  /** Override the apt mirror used to debootstrap base images. */
  AUTHBENCH_MIRROR: 'AUTHBENCH_MIRROR',
  /** Directory for authbench's caches (default: ~/.cache/authbench). */
  AUTHBENCH_CACHE_DIR: 'AUTHBENCH_CACHE_DIR',
  /** Path of a base-image map file (FROM substitution) overriding the default. */
  AUTHBENCH_BASE_MAP: 'AUTHBENCH_BASE_MAP',
  /** How a container without network gets its namespace: `runtime` (default, cheaper) or `docker` (Docker's none network); docker/none-network.ts. */
  AUTHBENCH_NONE_NETWORK: 'AUTHBENCH_NONE_NETWORK',
  /** PEM file of CA certificates image builds' RUN steps trust (as `--build-ca`); never kept in an image. */
  AUTHBENCH_BUILD_CA: 'AUTHBENCH_BUILD_CA',
  /** The host's proxies (either spelling), passed to image builds with `--build-proxy-from-env`. */
  HTTP_PROXY: 'HTTP_PROXY',
  HTTPS_PROXY: 'HTTPS_PROXY',
  NO_PROXY: 'NO_PROXY',
  OPENAI_API_KEY: 'OPENAI_API_KEY',
  OPENAI_BASE_URL: 'OPENAI_BASE_URL',
  ANTHROPIC_API_KEY: 'ANTHROPIC_API_KEY',
  ANTHROPIC_BASE_URL: 'ANTHROPIC_BASE_URL',
  /** Base URL of an OpenAI-compatible server (vLLM, Ollama, llama.cpp) for `openai-compatible/<name>`. */
  OPENAI_COMPATIBLE_BASE_URL: 'OPENAI_COMPATIBLE_BASE_URL',
  /** Key for the OpenAI-compatible server, if it wants one (never falls back to OPENAI_API_KEY). */
  OPENAI_COMPATIBLE_API_KEY: 'OPENAI_COMPATIBLE_API_KEY',
  /** A pricing JSON file merged over the bundled models/pricing.json. */
  AUTHBENCH_PRICING: 'AUTHBENCH_PRICING',
  /** The AuthBench development dataset the dataset tests build (default: ../shared/datasets/authbench-dev beside the checkout). Tests only. */
  AUTHBENCH_DEV_DATASET: 'AUTHBENCH_DEV_DATASET',
  /** Test tier (`ci`: the sampled Docker tier `make test` runs; `full`: everything, `make test-full`). Tests only. */
  AUTHBENCH_TEST_TIER: 'AUTHBENCH_TEST_TIER',
} as const;

export type EnvName = (typeof ENV)[keyof typeof ENV];

export function readEnv(name: EnvName, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}
