import { z } from 'zod';
import type { ModelMessage } from '../conversation/message.js';

/** The wire format's version, sent as `version` in every request. */
export const REMOTE_WIRE_VERSION = 1;

/**
 * What a `RemoteExecutor` POSTs (`content-type: application/json`) for one activation:
 * `{ version, participant, sessionId, branchId, turn, messages, context?, instructions? }`.
 * `messages` is the branch's history as the participant sees it, as model messages
 * (`{ role, content, toolCalls?, toolCallId?, toolName? }`, oldest first, ending with the new user
 * message); `context` is recalled memory; `instructions` the caller's extra instructions for this turn.
 */
export interface RemoteStepRequest {
  version: typeof REMOTE_WIRE_VERSION;
  participant: string;
  sessionId: string;
  branchId: string;
  turn: number;
  messages: readonly ModelMessage[];
  context?: readonly ModelMessage[];
  instructions?: string;
}

/**
 * One line of the service's answer (`content-type: application/x-ndjson`: one JSON object per
 * line, `\n`-separated, blank lines ignored). `delta` streams text; `usage` reports tokens; the step
 * ends with exactly one of `reply` (the answer to the user), `handoff` (to another participant) or
 * `end_conversation`. Lines after the ending one are ignored.
 *
 * @example
 * ```ts
 * import { RemoteStepEventSchema } from '@baton/core';
 * // A service validating what it is about to send:
 * const line = JSON.stringify(RemoteStepEventSchema.parse({ type: 'reply', text: 'Your parcel ships today.' }));
 * ```
 */
export const RemoteStepEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('delta'), text: z.string() }),
  z.object({
    type: z.literal('usage'),
    inputTokens: z.number().int().nonnegative(),
    outputTokens: z.number().int().nonnegative(),
  }),
  z.object({ type: z.literal('reply'), text: z.string() }),
  z.object({ type: z.literal('handoff'), target: z.string().min(1), reason: z.string().optional() }),
  z.object({ type: z.literal('end_conversation'), reason: z.string() }),
]);
/** One line of a remote step's answer: `delta`, `usage`, `reply`, `handoff` or `end_conversation`. */
export type RemoteStepEvent = z.infer<typeof RemoteStepEventSchema>;

/**
 * Splits a byte stream into lines (UTF-8, `\n` or `\r\n`), the last one included even without a
 * final newline.
 */
export async function* readLines(body: ReadableStream<Uint8Array>): AsyncGenerator<string, void> {
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      yield buffered.slice(0, newline).replace(/\r$/, '');
      buffered = buffered.slice(newline + 1);
      newline = buffered.indexOf('\n');
    }
  }
  buffered += decoder.decode();
  if (buffered !== '') yield buffered.replace(/\r$/, '');
}
