/**
 * The line put before a `context` message's text when it is sent to a model (OpenAI, AI SDK), so the model
 * knows the text is recalled memory and not something said in this conversation.
 *
 * @example
 * ```ts
 * import { RECALLED_CONTEXT_PREFIX } from '@baton/core';
 * body.messages[1].content.startsWith(RECALLED_CONTEXT_PREFIX); // true for a context message
 * ```
 */
export const RECALLED_CONTEXT_PREFIX =
  'Recalled context from earlier conversations (memory, not said in this conversation):\n\n';

/** A `context` message's text as the model sees it: {@link RECALLED_CONTEXT_PREFIX} + `content`. */
export function recalledContext(content: string): string {
  return RECALLED_CONTEXT_PREFIX + content;
}
