import type { CommandModule } from 'yargs';
import { tasksCommand } from './tasks.ts';
import { buildCommand } from './build.ts';
import { baseCommand } from './base.ts';
import { cleanCommand } from './clean.ts';
import { verifyCommand } from './verify.ts';
import { genGoldCommand } from './gen-gold.ts';
import { goldCommand } from './gold.ts';
import { evalCommand } from './eval.ts';
import { statusCommand } from './status.ts';
import { sandboxCommand } from './sandbox.ts';
import { scoreCommand } from './score.ts';
import { policyCommand } from './policy.ts';
import { reportCommand } from './report.ts';
import { compareCommand } from './compare.ts';
import { reparseCommand } from './reparse.ts';
import { datasetCommand } from './dataset.ts';
import { agentsCommand } from './agents.ts';
import { trajectoriesCommand } from './trajectories.ts';
import { attackCommand } from './attack.ts';

/**
 * A command with its own argument type. yargs erases argument types at
 * registration, so the list holds them with `any` args (and only here).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyCommand = CommandModule<object, any>;

/** Every top-level command, in the order --help lists them. */
export const commands: AnyCommand[] = [tasksCommand, buildCommand, baseCommand, verifyCommand, datasetCommand, sandboxCommand, genGoldCommand, goldCommand, scoreCommand, policyCommand, evalCommand, statusCommand, agentsCommand, trajectoriesCommand, attackCommand, reportCommand, compareCommand, reparseCommand, cleanCommand];
