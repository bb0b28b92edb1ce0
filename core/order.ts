/**
 * Code-unit (UTF-16) string order: deterministic and locale-independent, so
 * sorted output is the same bytes on every machine. Never `localeCompare`.
 */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
