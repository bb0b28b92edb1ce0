import type { z } from 'zod';
import type { Problem } from './errors.ts';

/** Turn a zod failure into located problems, one per issue, with a dotted field path. */
export function zodProblems(error: z.ZodError, file: string, prefix = ''): Problem[] {
  return error.issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    const field = [prefix, path].filter((s) => s !== '').join('.');
    return {
      file,
      ...(field === '' ? {} : { field }),
      message: issue.message,
      severity: 'error' as const,
    };
  });
}
