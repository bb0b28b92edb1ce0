/**
 * Runs once before the docker test files: fail loudly when no daemon answers,
 * and make sure authbench/base:bookworm exists (built from the apt mirror on
 * first use, about a minute), so every docker test can start from it.
 *
 * The files run in parallel (vitest.config.ts), each in its own process, so
 * what several of them would otherwise create at the same moment is made here
 * first, once: the harness volume (two processes filling the same new volume
 * would see each other's half-copied files), every bundled task's image, and
 * every suite family's base image. Two processes building the same family base
 * would each tag their own build, and a scenario image built on the first
 * would no longer match the tag (its content hash names the base's image id),
 * so a later cached rebuild would build again. Once these exist, the files
 * only ever find them cached.
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

  const started = performance.now();
  const { mapPool } = await import('../../core/index.ts');
  const { ensureHarness } = await import('../../sandbox/launcher/index.ts');
  const { discoverTasks, loadTask } = await import('../../task-format/index.ts');
  const { buildTaskImage } = await import('../../taskenv/index.ts');
  await ensureHarness(engine);
  const bundled = await Promise.all((await discoverTasks('tasks')).map((dir) => loadTask(dir)));
  const suite = await Promise.all((await discoverTasks('tasks/suite')).map((dir) => loadTask(dir)));
  // One scenario per family builds that family's base (and the scenario's own small image on top).
  const perFamily = suite.filter((t, i) => suite.findIndex((u) => u.authbench.family === t.authbench.family) === i);
  const built = await mapPool([...bundled, ...perFamily], 2, async (task) => ((await buildTaskImage(engine, task)).built ? 1 : 0));
  const n = built.reduce<number>((a, b) => a + b, 0);
  process.stderr.write(
    `[global-setup] harness, ${bundled.length} bundled task images and ${perFamily.length} suite family bases ready (${n} built) in ${Math.round((performance.now() - started) / 1000)}s\n`,
  );
}
