import type { CommandModule } from 'yargs';
import { tasksCommand } from './tasks.ts';

/** Every top-level command, in the order --help lists them. */
// Each command declares its own argument type; yargs only needs them as `{}`-rooted modules.
export const commands: CommandModule<object, object>[] = [tasksCommand];
