import type { Checkpoint } from '../../conversation/checkpoint.js';
import type { Episode } from '../../conversation/episode.js';
import { assertValidId } from '../../ids.js';
import type { Message } from '../../conversation/message.js';
import type { Branch, Session } from '../../conversation/session.js';
import type { EraseUserInput, EraseUserResult } from '../store.js';
import { assertTenantScope, inTenant } from '../tenantScope.js';

/** What `InMemoryStore` keeps of one session. */
export interface SessionRecord {
  session: Session;
  branches: Map<string, Branch>;
  /** Own messages of each branch, by seq. */
  messages: Map<string, Map<number, Message>>;
  checkpoints: Map<string, Checkpoint[]>;
}

/**
 * `InMemoryStore.eraseUser`: removes the user's sessions (of the tenant) and episodes from the
 * maps, counting what each held.
 * @throws {InvalidIdError} for an unsafe tenant or user id
 */
export function eraseUserRecords(sessions: Map<string, SessionRecord>, episodes: Map<string, Episode>, input: EraseUserInput): EraseUserResult {
  const userId = assertValidId('user', input?.userId);
  assertTenantScope(input);
  const erased: EraseUserResult = { sessions: 0, branches: 0, messages: 0, checkpoints: 0, episodes: 0 };
  for (const record of [...sessions.values()]) {
    if (record.session.userId !== userId || !inTenant(record.session, input)) continue;
    erased.sessions += 1;
    erased.branches += record.branches.size;
    for (const own of record.messages.values()) erased.messages += own.size;
    for (const list of record.checkpoints.values()) erased.checkpoints += list.length;
    sessions.delete(record.session.id);
  }
  for (const episode of [...episodes.values()]) {
    if (episode.userId !== userId || !inTenant(episode, input)) continue;
    episodes.delete(episode.id);
    erased.episodes += 1;
  }
  return erased;
}
