import { z } from 'zod';
import { AuthbenchError } from '../core/index.ts';

/** Providers a `--model provider/name` reference may name. `scripted` models live outside this module. */
export const PROVIDERS = ['openai', 'anthropic', 'openai-compatible', 'scripted'] as const;
export type Provider = (typeof PROVIDERS)[number];

/** The provider a bare name (no `provider/` prefix) belongs to: `gpt-5` means `openai/gpt-5`. */
export const DEFAULT_PROVIDER: Provider = 'openai';

export const ModelRefSchema = z
  .object({
    provider: z.enum(PROVIDERS).describe('Who serves the model; `scripted` is a deterministic test agent.'),
    name: z
      .string()
      .min(1)
      .regex(/^\S+$/, 'must not contain whitespace')
      .describe('Model name as the provider knows it; may itself contain `/` (e.g. `meta-llama/Llama-3.1-8B`).'),
  })
  .describe('A parsed `--model provider/name` reference.');
export type ModelRef = z.infer<typeof ModelRefSchema>;

function isProvider(s: string): s is Provider {
  return (PROVIDERS as readonly string[]).includes(s);
}

/**
 * Parse `provider/name` (split at the first `/`, so names may contain more
 * slashes) or a bare `name` (→ DEFAULT_PROVIDER). `flag` names the option in
 * error messages.
 */
export function parseModelRef(text: string, flag = '--model'): ModelRef {
  const raw = text.trim();
  const valid = PROVIDERS.join(', ');
  const fail = (why: string, hint?: string): never => {
    throw new AuthbenchError('INVALID_ARGUMENT', `${flag} ${JSON.stringify(text)}: ${why}`, {
      hint: hint ?? `write provider/name with provider one of: ${valid} (a bare name means ${DEFAULT_PROVIDER}/name)`,
    });
  };
  if (raw === '') return fail('empty model reference');
  const slash = raw.indexOf('/');
  const provider = slash === -1 ? DEFAULT_PROVIDER : raw.slice(0, slash);
  const name = slash === -1 ? raw : raw.slice(slash + 1);
  if (!isProvider(provider)) {
    return fail(
      `unknown provider ${JSON.stringify(provider)} (valid providers: ${valid})`,
      `for a model served by an OpenAI-compatible server write openai-compatible/${raw}`,
    );
  }
  if (name === '') return fail(`missing model name after "${provider}/"`);
  const parsed = ModelRefSchema.safeParse({ provider, name });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return fail(`model name ${issue === undefined ? 'is invalid' : issue.message}`);
  }
  return parsed.data;
}

export function formatModelRef(ref: ModelRef): string {
  return `${ref.provider}/${ref.name}`;
}
