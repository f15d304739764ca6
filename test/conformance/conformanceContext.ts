import type { CreateSessionInput, Message, Session, Store } from '@baton/core';
import type { DamageCheckpoint } from './checkpointDamage.js';
import { makeMessages, uniqueId } from './fixtures.js';

/** What each part of the conformance suite sees: the store under test (created before the suite runs). */
export interface ConformanceContext {
  readonly store: Store;
  /** Rewrites a stored checkpoint with damage; set for stores that keep breakable documents. */
  readonly damageCheckpoint?: DamageCheckpoint | undefined;
  /** The store's `maxAssetBytes` (the asset tests upload just under and over it). */
  readonly maxAssetBytes: number;
}

/** Creates a session with a unique id (and the given fields). */
export function createTestSession(store: Store, input: Partial<CreateSessionInput> = {}): Promise<Session> {
  return store.createSession({ id: uniqueId('s'), ...input });
}

/** Creates a session with `count` messages on `main`; returns the session and the messages. */
export async function createSessionWithMessages(
  store: Store,
  count: number,
  input: Partial<CreateSessionInput> = {},
): Promise<{ session: Session; messages: Message[] }> {
  const session = await createTestSession(store, input);
  const messages = makeMessages(1, count);
  if (count > 0)
    await store.appendMessages(
      session.id,
      'main',
      messages,
      input.tenantId === undefined ? {} : { tenantId: input.tenantId },
    );
  return { session, messages };
}

/** The seqs of messages, in order. */
export function seqs(messages: readonly Pick<Message, 'seq'>[]): number[] {
  return messages.map((m) => m.seq);
}

/** The ids of messages, in order. */
export function ids(messages: readonly Pick<Message, 'id'>[]): string[] {
  return messages.map((m) => m.id);
}
