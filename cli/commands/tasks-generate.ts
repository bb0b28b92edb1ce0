import type { Argv, CommandModule } from 'yargs';
import { printJson, renderTable } from '../table.ts';

interface GenerateArgs {
  families: string[];
  'per-family': number;
  seed: number;
  out: string;
  check: boolean;
  json: boolean;
}

/** `authbench tasks generate`: the evidence-stage suite from its families, deterministically. */
export const generateCommand: CommandModule<object, GenerateArgs> = {
  command: 'generate',
  describe: 'Generate evidence-stage scenarios from the built-in families (deterministic per seed)',
  builder: (y: Argv) =>
    y
      .option('families', { describe: 'Family ids (repeatable; default the bundled suite\'s families)', type: 'string', array: true, default: [] })
      .option('per-family', { describe: "Scenarios per family (stages assigned round robin); the family's variants (listener sink, live memory, topologies) come on top, with its first instance", type: 'number', default: 10 })
      .option('seed', { describe: 'Generation seed', type: 'number', default: 0 })
      .option('out', { describe: 'Folder to write (replaced as a whole)', type: 'string', default: 'tasks/suite' })
      .option('check', { describe: 'Write nothing; exit 1 if the folder differs from a fresh generation', type: 'boolean', default: false })
      .option('json', { describe: 'Print the manifest counts as JSON', type: 'boolean', default: false })
      .example('$0 tasks generate', 'Regenerate the bundled suite (tasks/suite, 10 per family, seed 0)')
      .example('$0 tasks generate --families log-triage --per-family 4 --seed 7 --out /tmp/lt', 'One family, one scenario per stage')
      .example('$0 tasks generate --check', 'CI: is the committed suite exactly what the generator makes?'),
  handler: async (args) => {
    const { generateSuite, writeSuite, diffSuite } = await import('../../suite/index.ts');
    const suite = generateSuite({ families: args.families, perFamily: args['per-family'], seed: args.seed });
    if (args.check) {
      const diff = await diffSuite(args.out, suite);
      if (args.json) printJson(diff);
      else if (diff.length === 0) process.stdout.write(`${args.out}: identical to a fresh generation (${suite.scenarios.length} scenarios)\n`);
      else for (const d of diff) process.stdout.write(`${d.path}: ${d.problem}\n`);
      if (diff.length > 0) process.exitCode = 1;
      return;
    }
    await writeSuite(args.out, suite);
    const { counts } = suite.manifest;
    if (args.json) printJson({ out: args.out, scenarios: suite.scenarios.length, ...counts });
    else {
      const rows = Object.entries(counts.by_stage).map(([stage, n]) => ({ stage, n }));
      process.stdout.write(renderTable([{ header: 'stage', value: (r: { stage: string }) => r.stage }, { header: 'scenarios', value: (r: { n: number }) => String(r.n) }], rows));
      process.stdout.write(`wrote ${suite.scenarios.length} scenarios from ${suite.bases.length} families to ${args.out} (manifest.json lists them with hashes)\n`);
    }
  },
};
