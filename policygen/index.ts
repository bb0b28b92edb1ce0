/** Model-written authorization policies (pipeline step 4): prompts, exploration, strategies, scripted writers. */
export * from './prompt.ts';
export * from './explore.ts';
export * from './writers.ts';
export * from './generate.ts';
