import type { Interrupt, ResumeEntry } from '@ag-ui/core';
import { InvalidInputError, type Request } from '@baton/core';
import type { RequestAnswer } from '@baton/handoff';
import { z } from 'zod';

/** The JSON Schema of the answer each kind of request takes, as `Interrupt.responseSchema`. */
const RESPONSE_SCHEMAS: Readonly<Record<Request['type'], Record<string, unknown>>> = {
  user_input: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  tool_approval: {
    type: 'object',
    properties: {
      approved: { type: 'boolean' },
      reason: { type: 'string' },
      always: { const: 'session', description: 'with approved: true, allow the tool for the rest of the session' },
      arguments: { type: 'object', description: 'with approved: true, the arguments to call the tool with instead' },
    },
    required: ['approved'],
  },
  human_step: {
    oneOf: [
      { type: 'object', properties: { reply: { type: 'string' } }, required: ['reply'] },
      {
        type: 'object',
        properties: { handoff: { type: 'string' }, reason: { type: 'string' } },
        required: ['handoff'],
      },
    ],
  },
};

/** What each kind of request takes as `ResumeEntry.payload`, in words (for error messages). */
const PAYLOADS: Readonly<Record<Request['type'], string>> = {
  user_input: '{ "text": "…" } (or the text itself)',
  tool_approval: '{ "approved": true } or { "approved": false, "reason": "…" }',
  human_step: '{ "reply": "…" } or { "handoff": "<agent>", "reason": "…" }',
};

const PAYLOAD_SCHEMAS = {
  user_input: z.union([z.string(), z.strictObject({ text: z.string() }).transform((p) => p.text)]),
  tool_approval: z.union([
    z.strictObject({
      approved: z.literal(true),
      always: z.literal('session').optional(),
      arguments: z.record(z.string(), z.unknown()).optional(),
    }),
    z.strictObject({ approved: z.literal(false), reason: z.string().optional() }),
  ]),
  human_step: z.union([
    z.string(),
    z.strictObject({ reply: z.string() }),
    z.strictObject({ handoff: z.string(), reason: z.string().optional() }),
  ]),
} as const;

/**
 * A pending Baton request as an AG-UI interrupt (ended a run with `outcome: { type: 'interrupt' }`):
 * `id` is the request id, `reason` its type (`user_input`, `tool_approval`, `human_step`), `message`
 * what the person is asked, `toolCallId` the paused tool call, `responseSchema` the JSON Schema of
 * the payload that answers it, and `metadata` `{ agent, toolName?, arguments?, stepId? }`.
 *
 * @param request a pending request (`session.pendingRequests`)
 * @returns the interrupt
 * @example
 * ```ts
 * interruptOf(session.pendingRequests[0]); // { id: 'r-1', reason: 'tool_approval', message: 'billing asks to call refund with {…}', … }
 * ```
 */
export function interruptOf(request: Request): Interrupt {
  const base = { id: request.id, reason: request.type, responseSchema: RESPONSE_SCHEMAS[request.type] };
  switch (request.type) {
    case 'user_input':
      return { ...base, message: request.prompt, toolCallId: request.toolCallId, metadata: { agent: request.agent } };
    case 'tool_approval':
      return {
        ...base,
        message: `${request.agent} asks to call ${request.toolName} with ${request.arguments}`,
        toolCallId: request.toolCallId,
        metadata: { agent: request.agent, toolName: request.toolName, arguments: request.arguments },
      };
    case 'human_step':
      return { ...base, message: request.prompt, metadata: { agent: request.agent, stepId: request.stepId } };
  }
}

/**
 * The answer a resume entry gives its request: for a `tool_approval`, `{ approved, reason?, always?,
 * arguments? }` (a `cancelled` entry rejects the call); for a `user_input`, `{ text }` or the text;
 * for a `human_step`, `{ reply }`, `{ handoff, reason? }` or the reply text.
 *
 * @param request the pending request the entry answers (`entry.interruptId` is its id)
 * @param entry the AG-UI resume entry
 * @returns the answer for `session.respond(request.id, answer)`
 * @throws {InvalidInputError} when the payload does not fit the request (the message names the
 *   interrupt and the payload it takes), or a `user_input` or `human_step` is `cancelled` (it needs an answer)
 * @example
 * ```ts
 * resumeAnswer(approval, { interruptId: approval.id, status: 'resolved', payload: { approved: true } }); // { approved: true }
 * ```
 */
export function resumeAnswer(request: Request, entry: ResumeEntry): RequestAnswer {
  if (entry.status === 'cancelled') {
    if (request.type === 'tool_approval') return { approved: false, reason: 'cancelled' };
    throw new InvalidInputError(
      `Interrupt ${JSON.stringify(request.id)} (${request.type}) cannot be cancelled: the turn waits on its answer. Resume it with status "resolved" and payload ${PAYLOADS[request.type]}.`,
    );
  }
  const parsed = PAYLOAD_SCHEMAS[request.type].safeParse(entry.payload);
  if (!parsed.success) {
    throw new InvalidInputError(
      `The payload ${JSON.stringify(entry.payload) ?? 'undefined'} does not answer interrupt ${JSON.stringify(request.id)} (${request.type}): send ${PAYLOADS[request.type]}.`,
    );
  }
  return stripUndefined(parsed.data) as RequestAnswer;
}

/** The resume entries matched to the pending requests they answer, in the order the requests were made. */
export function matchResume(
  pending: readonly Request[],
  resume: readonly ResumeEntry[],
): { request: Request; entry: ResumeEntry }[] {
  const byId = new Map(pending.map((request) => [request.id, request]));
  for (const entry of resume) {
    if (!byId.has(entry.interruptId)) {
      const open = pending.map((request) => JSON.stringify(request.id)).join(', ');
      throw new InvalidInputError(
        `Resume entry ${JSON.stringify(entry.interruptId)} answers no open interrupt of this thread (${open === '' ? 'none is open' : `open: ${open}`}); resume only the interrupts the last run ended with.`,
      );
    }
  }
  const entries = new Map(resume.map((entry) => [entry.interruptId, entry]));
  return pending.flatMap((request) => {
    const entry = entries.get(request.id);
    return entry === undefined ? [] : [{ request, entry }];
  });
}

function stripUndefined(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
}
