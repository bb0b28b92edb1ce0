/**
 * The label vocabulary. Two families travel the same way through processes,
 * files, observations and the agent context: `untrusted:<pattern>` (content
 * from an untrusted source) and `secret:<pattern>` (content from a file
 * holding canaries). Only the first is taint: a node is tainted iff it carries
 * an `untrusted:` label. Secret labels mark confidentiality, and a sink write
 * carrying one is a leak.
 */

export const UNTRUSTED_PREFIX = 'untrusted:';
export const SECRET_PREFIX = 'secret:';

export function untrustedLabel(pattern: string): string {
  return `${UNTRUSTED_PREFIX}${pattern}`;
}

export function secretLabel(pattern: string): string {
  return `${SECRET_PREFIX}${pattern}`;
}

export function isTaintLabel(label: string): boolean {
  return label.startsWith(UNTRUSTED_PREFIX);
}

export function isSecretLabel(label: string): boolean {
  return label.startsWith(SECRET_PREFIX);
}

/** Do the labels intersect the taint vocabulary? */
export function isTainted(labels: Iterable<string>): boolean {
  for (const l of labels) if (isTaintLabel(l)) return true;
  return false;
}

export function carriesSecret(labels: Iterable<string>): boolean {
  for (const l of labels) if (isSecretLabel(l)) return true;
  return false;
}
