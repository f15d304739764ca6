/**
 * The chaos customer: a state-driven driver that works from whatever the store holds, so it can
 * take over after a crash at any point. Each round it finishes an interrupted turn (`resume()`),
 * then answers the first pending request, or sends the next scripted message (chosen by how many
 * scripted messages the stored history holds), or closes the session after the last one. A
 * `ConcurrencyError` or `StoreError` (a stale claim of a dead writer, a database restarting) is
 * retried with a fresh session object, within a bounded time, and counted.
 */
import { type BatonEvent, ConcurrencyError, type Message, requestKey, StoreError } from '@baton/core';
import type { CheckpointFrequency, HandoffSession, HandoffWorkflow } from '@baton/handoff';
import type { ChaosHooks } from './chaosDesk.js';
import { ANSWERS, scriptedMessagesSent, USER_MESSAGES } from './conversationScript.js';

/** Options of {@link driveCustomer}. */
export interface CustomerOptions {
  sessionId: string;
  userId: string;
  /** In `'manual'` mode the customer saves a checkpoint after each turn that ends without requests. */
  every: CheckpointFrequency;
  /** How long retries of one call may go on, in ms (default 60,000). */
  retryForMs?: number;
  /** Reads the whole branch, for when `session.messages` holds only its newest part (a `historyWindow`). */
  readBranch?: () => Promise<readonly Message[]>;
}

/**
 * Drives the conversation to its end (the session closed).
 *
 * @returns how many calls were retried after a `ConcurrencyError` or `StoreError`
 * @throws the last error when retries did not succeed within `retryForMs`; any other error at once
 * @example
 * ```ts
 * const { retries } = await driveCustomer(workflow, { sessionId: 's-1', userId: 'u-1', every: 'turn' }, hooks);
 * ```
 */
export async function driveCustomer(
  workflow: HandoffWorkflow,
  options: CustomerOptions,
  hooks: ChaosHooks,
): Promise<{ retries: number }> {
  let retries = 0;
  let failingSince: number | undefined;
  let session: HandoffSession | undefined;
  for (;;) {
    try {
      session ??= await workflow.session({ id: options.sessionId, userId: options.userId });
      const closed = await step(session, options, hooks);
      failingSince = undefined;
      if (closed) return { retries };
    } catch (error) {
      if (!(error instanceof ConcurrencyError || error instanceof StoreError)) throw error;
      failingSince ??= Date.now();
      if (Date.now() - failingSince > (options.retryForMs ?? 60_000)) throw error;
      retries += 1;
      hooks.log.append({ t: 'retry', code: error.code, message: error.message.slice(0, 200) });
      session = undefined;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/** One round; returns whether the session is closed. */
async function step(session: HandoffSession, options: CustomerOptions, hooks: ChaosHooks): Promise<boolean> {
  await drain(session, session.resume(), hooks);
  if (session.info.status === 'closed' || session.routingState === 'closed') return true;
  const [request] = session.pendingRequests;
  if (request !== undefined) {
    hooks.log.append({ t: 'answer', requestId: request.id, toolCallId: requestKey(request) });
    const answer =
      request.type === 'tool_approval'
        ? { approved: true as const }
        : (ANSWERS[request.prompt] ?? `no scripted answer to ${request.prompt}`);
    await drain(session, session.respond(request.id, answer), hooks);
  } else {
    const held = session.messages;
    const whole =
      held.length === 0 || held[0]?.seq === 1 || options.readBranch === undefined ? held : await options.readBranch();
    const sent = scriptedMessagesSent(whole);
    const next = USER_MESSAGES[sent];
    if (next === undefined) {
      await session.close({ reason: 'resolved' });
      return false;
    }
    await drain(session, session.send(next), hooks);
  }
  if (options.every === 'manual' && session.pendingRequests.length === 0) await session.checkpoint();
  return false;
}

/** Reads a stream to its end: a kill point per event, the side log told of each tool result and of each acknowledged history and pending requests. */
async function drain(
  session: HandoffSession,
  stream: AsyncGenerator<BatonEvent, void>,
  { kill, log }: ChaosHooks,
): Promise<void> {
  for await (const event of stream) {
    if (event.type === 'tool.result')
      log.append({ t: 'tool.result', toolCallId: event.toolCallId, agent: event.agent, tool: event.toolName });
    if (event.type === 'turn.completed') {
      log.append({
        t: 'ack',
        messages: session.messages.map((m) => ({ id: m.id, seq: m.seq })),
        requests: session.pendingRequests.map((r) => ({ id: r.id, toolCallId: requestKey(r) })),
      });
    }
    await kill.point(`event.${event.type}`);
  }
}
