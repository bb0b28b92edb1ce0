/** The baseline policies every comparison includes. */
import type { Policy } from './schema.ts';

/** Everything on every axis, network unrestricted: the positive control. */
export function allowAllPolicy(): Policy {
  return {
    read: ['/**'],
    write: ['/**'],
    execute: ['/**'],
    network: { tcp_connect: [], tcp_bind: [], allow_all: true },
  };
}

/** Nothing at all (the runtime's implicit set is still granted by the compiler). */
export function denyAllPolicy(): Policy {
  return { read: [], write: [], execute: [] };
}
