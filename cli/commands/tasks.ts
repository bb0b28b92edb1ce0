import type { CommandModule } from 'yargs';

// Placeholder replaced by the task-format work.
export const tasksCommand: CommandModule = {
  command: 'tasks',
  describe: 'List and validate tasks',
  handler: () => {},
};
