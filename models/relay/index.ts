export * from './wire.ts';
export * from './openai.ts';
export * from './responses.ts';
export * from './anthropic.ts';
export * from './budget.ts';
export * from './records.ts';
export * from './backends.ts';
export * from './server.ts';
