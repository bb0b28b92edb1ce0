export * from './image.ts';
export * from './container.ts';
export * from './sandbox.ts';
export * from './sidecars.ts';
export * from './relay-forward.ts';
export * from './egress.ts';
export * from './copy.ts';
export * from './listener-sink.ts';
