export * from './image.ts';
export * from './container.ts';
