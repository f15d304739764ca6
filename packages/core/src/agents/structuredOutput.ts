import type { z } from 'zod';
import type { ModelMessage } from '../conversation/message.js';

/** What {@link checkStructuredOutput} finds: the parsed value, or what is wrong with the answer. */
export type CheckedOutput = { ok: true; value: unknown } | { ok: false; issues: string };

/**
 * Parses a final answer as JSON and validates it with an agent's `outputType`. A fenced answer
 * (```` ```json … ``` ````), which some models write even when asked for JSON, is unwrapped first.
 *
 * @param schema the agent's `outputType`
 * @param text the model's answer
 * @returns `{ ok: true, value }` with zod's output, or `{ ok: false, issues }` naming the JSON error or each schema issue by path
 * @example
 * ```ts
 * import { checkStructuredOutput } from '@baton/core';
 * import { z } from 'zod';
 * await checkStructuredOutput(z.object({ n: z.number() }), '{"n":"x"}'); // { ok: false, issues: 'n: Invalid input: expected number, received string' }
 * ```
 */
export async function checkStructuredOutput(schema: z.ZodType, text: string): Promise<CheckedOutput> {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/.exec(text);
  let raw: unknown;
  try {
    raw = JSON.parse(fenced?.[1] ?? text);
  } catch (error) {
    return { ok: false, issues: `the answer is not JSON (${(error as Error).message})` };
  }
  try {
    const parsed = await schema.safeParseAsync(raw);
    if (parsed.success) return { ok: true, value: parsed.data };
    return {
      ok: false,
      issues: parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; '),
    };
  } catch (error) {
    return {
      ok: false,
      issues: `the schema's refinement failed: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

/**
 * The model messages that tell a model its answer failed the output schema: its answer, then a user
 * message naming the issues. They go into the next model input only and are never stored.
 *
 * @param answer the model's invalid answer
 * @param issues from {@link checkStructuredOutput}
 */
export function outputCorrection(answer: string, issues: string): ModelMessage[] {
  return [
    { role: 'assistant', content: answer },
    {
      role: 'user',
      content: `Your answer does not satisfy the required output schema: ${issues}. Answer again with only a JSON value that satisfies the schema.`,
    },
  ];
}
