import { MAIN_BRANCH, type Message, NotFoundError, type Store } from '@baton/core';

/** One tool call as an audit sees it, derived from the stored messages (never stored twice). */
export interface ToolCallRecord {
  /** The call's id, as the model (or `ScriptedModel`) gave it. */
  toolCallId: string;
  /** The tool's name. */
  name: string;
  /** The model's arguments, parsed from JSON; the raw text when it was not valid JSON. */
  input: unknown;
  /** The tool result's text as the model saw it (an error text when the call failed). */
  output: string;
  /** Whether the result is not an error (`isError` not set on the tool result). */
  succeeded: boolean;
  /** The error text, when the call failed (unknown tool, invalid arguments, a throw, a rejected approval). */
  error?: string;
  /** ISO-8601 time the tool started (its result's time minus its duration; the call's message time when no duration was stored). */
  calledAt: string;
  /** ISO-8601 time its result was recorded. */
  finishedAt: string;
  /** Wall time of the call in milliseconds (0 when none was stored). */
  durationMs: number;
  /** The agent that made the call. */
  agent?: string;
  /** `seq` of the assistant message holding the call and of the tool result, in the branch. */
  callSeq: number;
  resultSeq: number;
}

/** Options of {@link listToolCalls}. */
export interface ListToolCallsOptions {
  /** Default `main`. A fork's list includes its parent's calls up to the fork point. */
  branchId?: string;
  /** Only when the session belongs to this tenant. */
  tenantId?: string;
}

/**
 * Every answered tool call of a session's branch, in call order, for audit: name, input, output,
 * whether it succeeded, the error, when it ran and how long it took, and the agent. Derived from the
 * stored messages (each assistant message's `toolCalls` and the tool results that answer them), so
 * no second copy is kept (docs/architecture.md invariant 1). A call still waiting for its result (a pending
 * approval) is not listed until it has one.
 *
 * @param store the store the session lives in
 * @param sessionId the session
 * @param options `{ branchId?, tenantId? }` (default branch `main`)
 * @returns one {@link ToolCallRecord} per answered call, in call order (`callSeq`, then order within the message)
 * @throws {NotFoundError} when the session does not exist or belongs to another tenant
 * @throws {InvalidIdError} for an unsafe session id
 * @example
 * ```ts
 * import { listToolCalls } from '@baton/memory';
 * for (const call of await listToolCalls(store, 'chat-81')) console.log(call.name, call.succeeded, call.durationMs);
 * ```
 */
export async function listToolCalls(
  store: Store,
  sessionId: string,
  options: ListToolCallsOptions = {},
): Promise<ToolCallRecord[]> {
  const scope = options.tenantId === undefined ? {} : { tenantId: options.tenantId };
  if ((await store.getSession(sessionId, scope)) === undefined) {
    throw new NotFoundError(
      `Session ${JSON.stringify(sessionId)} does not exist${options.tenantId === undefined ? '' : ` in tenant ${JSON.stringify(options.tenantId)}`}.`,
    );
  }
  const messages = await store.readMessages(sessionId, options.branchId ?? MAIN_BRANCH, scope);
  const results = new Map<string, Message>();
  for (const m of messages)
    if (m.role === 'tool' && m.toolCallId !== undefined && !results.has(m.toolCallId)) results.set(m.toolCallId, m);

  const records: ToolCallRecord[] = [];
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    for (const call of m.toolCalls ?? []) {
      const result = results.get(call.id);
      if (result === undefined) continue;
      const durationMs = result.durationMs ?? 0;
      const record: ToolCallRecord = {
        toolCallId: call.id,
        name: call.name,
        input: parseArguments(call.arguments),
        output: result.content,
        succeeded: result.isError !== true,
        calledAt:
          result.durationMs === undefined
            ? m.createdAt
            : new Date(Date.parse(result.createdAt) - durationMs).toISOString(),
        finishedAt: result.createdAt,
        durationMs,
        callSeq: m.seq,
        resultSeq: result.seq,
      };
      if (result.isError === true) record.error = result.content;
      const agent = result.agent ?? m.agent;
      if (agent !== undefined) record.agent = agent;
      records.push(record);
    }
  }
  return records;
}

function parseArguments(text: string): unknown {
  try {
    return text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    return text;
  }
}
