/**
 * Reading a search folder's files: a missing one means the folder is no
 * (finished) search — bad input, exit 1 — and an invalid one names its field.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { AuthbenchError } from '../core/index.ts';

export async function readSearchJson<T>(path: string, schema: z.ZodType<T>): Promise<T> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    throw new AuthbenchError('INVALID_ARGUMENT', `${path}: not found (is it a search folder, with a finished search?)`, { file: path });
  }
  const parsed = schema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new AuthbenchError('INVALID_CONFIG', `${path}: ${z.prettifyError(parsed.error)}`, { file: path });
  return parsed.data;
}
