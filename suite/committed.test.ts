/**
 * The committed suite (tasks/suite) is exactly what the generator makes from
 * the parameters its manifest records: nobody edited a scenario by hand, and
 * a generator change that alters content cannot land without regenerating.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { diffSuite, generateSuite, ManifestSchema } from './index.ts';

const SUITE = 'tasks/suite';

describe('committed suite', () => {
  it('matches a fresh generation byte for byte (run: authbench tasks generate)', async () => {
    const manifest = ManifestSchema.parse(JSON.parse(readFileSync(`${SUITE}/manifest.json`, 'utf8')));
    const suite = generateSuite({ perFamily: manifest.per_family, seed: manifest.seed, families: manifest.families.map((f) => f.id) });
    expect(await diffSuite(SUITE, suite)).toEqual([]);
  }, 60_000);
});
