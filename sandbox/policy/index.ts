export * from './schema.ts';
export * from './parse.ts';
export * from './extract.ts';
export * from './builtins.ts';
export * from './relay-grant.ts';
export * from './egress-grant.ts';
