/**
 * Runs once before the docker test files: fail loudly when no daemon answers,
 * and make sure authbench/base:bookworm exists (built from the apt mirror on
 * first use, about a minute), so every docker test can start from it.
 */
export default async function setup(): Promise<void> {
  const { connectDocker, ensureBaseImages, BASE_IMAGE_REF } = await import('../../docker/index.ts');
  let engine;
  try {
    engine = await connectDocker();
  } catch (e) {
    const err = e as Error & { hint?: string };
    throw new Error(`docker tests need a Docker daemon. ${err.message}${err.hint === undefined ? '' : ` (${err.hint})`}`, { cause: e });
  }
  const [result] = await ensureBaseImages(engine, {
    onProgress: (line) => {
      if (line.startsWith('I: Base system installed')) process.stderr.write(`[global-setup] ${line}\n`);
    },
  });
  if (result?.built === true) process.stderr.write(`[global-setup] built ${BASE_IMAGE_REF} (${result.imageId.slice(0, 19)})\n`);
}
