import { z } from 'zod';
import { STAGES } from '../task-format/index.ts';

export const MANIFEST_FILE = 'manifest.json';

export const ManifestScenarioSchema = z
  .strictObject({
    id: z.string().describe('Task id (folder name)'),
    family: z.string().describe('Family the scenario was generated from'),
    family_version: z.string(),
    stage: z.enum(STAGES),
    cluster: z.string().describe('Independent unit for cluster statistics: the family instance (one parameter draw) the scenario belongs to'),
    instance: z.number().int().nonnegative().describe('Parameter draw within the family'),
    parameters: z.record(z.string(), z.unknown()).describe('What was drawn'),
    content_sha256: z.string().describe('Hash of the generated task folder (paths, modes, contents)'),
  })
  .describe('One generated scenario');

export const ManifestSchema = z
  .strictObject({
    schema_version: z.literal(1),
    generator_version: z.string().describe('Version of the generator; bumped when the kit changes generated content'),
    seed: z.number().int(),
    per_family: z.number().int().positive(),
    families: z.array(z.strictObject({ id: z.string(), version: z.string(), title: z.string(), base_sha256: z.string() })),
    counts: z.strictObject({
      by_stage: z.record(z.string(), z.number().int()),
      by_family: z.record(z.string(), z.number().int()),
    }),
    scenarios: z.array(ManifestScenarioSchema),
  })
  .describe('manifest.json of a generated suite: every scenario with its hash, so a regenerated suite can be compared');
export type Manifest = z.infer<typeof ManifestSchema>;
export type ManifestScenario = z.infer<typeof ManifestScenarioSchema>;
