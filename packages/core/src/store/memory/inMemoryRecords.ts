import type { Checkpoint } from '../../conversation/checkpoint.js';
import type { Episode } from '../../conversation/episode.js';
import type { Message } from '../../conversation/message.js';
import { type Branch, MAIN_BRANCH, type Session } from '../../conversation/session.js';
import { assertValidId } from '../../ids.js';
import type { BranchLease } from '../branchLease.js';
import type { EventLogBatch } from '../eventLog.js';
import type { EraseUserInput, EraseUserResult, StoredAsset } from '../store.js';
import { assertTenantScope, inTenant } from '../tenantScope.js';

/** What `InMemoryStore` keeps of one session. */
export interface SessionRecord {
  session: Session;
  branches: Map<string, Branch>;
  /** Own messages of each branch, in seq order: `messages.get(id)[i].seq === firstOwnSeq + i` (frozen; read without a per-read rebuild). */
  messages: Map<string, Message[]>;
  checkpoints: Map<string, Checkpoint[]>;
  /** The session's assets by id, in upload order (created on the first upload). */
  assets?: Map<string, StoredAsset>;
  /** Each branch's event log (created on the first append). */
  eventLogs?: Map<string, EventLogBatch[]>;
  /** Each branch's lease (created on the first acquisition). */
  leases?: Map<string, BranchLease>;
  /** When the store last read or wrote this session (`Date.now()` ms). */
  touchedAt: number;
}

/** Limits of an `InMemoryStore` (see {@link InMemoryStoreOptions}). */
export interface SessionLimits {
  maxSessions: number;
  idleTtlMs: number;
}

/** The record of a new session: its `main` branch, no messages, no checkpoints, used at `now` (ms). */
export function newSessionRecord(session: Session, now: number): SessionRecord {
  const main: Branch = {
    id: MAIN_BRANCH,
    sessionId: session.id,
    createdAt: session.createdAt,
    state: {},
    version: 1,
  };
  return {
    session,
    branches: new Map([[MAIN_BRANCH, main]]),
    messages: new Map([[MAIN_BRANCH, []]]),
    checkpoints: new Map(),
    touchedAt: now,
  };
}

/**
 * Marks a session as just used: its record moves to the end of the map, so the map stays ordered
 * from least to most recently used and eviction looks at the oldest first.
 */
export function touchRecord(sessions: Map<string, SessionRecord>, record: SessionRecord, now: number): void {
  record.touchedAt = now;
  sessions.delete(record.session.id);
  sessions.set(record.session.id, record);
}

/**
 * Makes room for one more session when the store holds `maxSessions`: removes the least recently
 * used sessions that are closed or idle (not read or written for `idleTtlMs`), oldest first, and
 * never one in use (a turn reads or writes its session at every durability point). When no session
 * can go, the store holds more than `maxSessions` rather than lose an active conversation. Episodes
 * are kept (they are the memory of closed sessions).
 *
 * @returns the ids removed
 */
export function evictForRoom(sessions: Map<string, SessionRecord>, limits: SessionLimits, now: number): string[] {
  const evicted: string[] = [];
  if (sessions.size < limits.maxSessions) return evicted;
  for (const record of sessions.values()) {
    if (sessions.size - evicted.length < limits.maxSessions) break;
    if (record.session.status === 'closed' || now - record.touchedAt >= limits.idleTtlMs)
      evicted.push(record.session.id);
  }
  for (const id of evicted) sessions.delete(id);
  return evicted;
}

/**
 * `InMemoryStore.eraseUser`: removes the user's sessions (of the tenant) and episodes from the
 * maps, counting what each held.
 * @throws {InvalidIdError} for an unsafe tenant or user id
 */
export function eraseUserRecords(
  sessions: Map<string, SessionRecord>,
  episodes: Map<string, Episode>,
  input: EraseUserInput,
): EraseUserResult {
  const userId = assertValidId('user', input?.userId);
  assertTenantScope(input);
  const erased: EraseUserResult = { sessions: 0, branches: 0, messages: 0, checkpoints: 0, episodes: 0, assets: 0 };
  for (const record of [...sessions.values()]) {
    if (record.session.userId !== userId || !inTenant(record.session, input)) continue;
    erased.sessions += 1;
    erased.branches += record.branches.size;
    for (const own of record.messages.values()) erased.messages += own.length;
    for (const list of record.checkpoints.values()) erased.checkpoints += list.length;
    erased.assets! += record.assets?.size ?? 0;
    sessions.delete(record.session.id);
  }
  for (const episode of [...episodes.values()]) {
    if (episode.userId !== userId || !inTenant(episode, input)) continue;
    episodes.delete(episode.id);
    erased.episodes += 1;
  }
  return erased;
}

/** The checkpoints of an existing branch of `record`, oldest first (created empty on first use). */
export function checkpointList(record: SessionRecord, branchId: string): Checkpoint[] {
  let list = record.checkpoints.get(branchId);
  if (list === undefined) {
    list = [];
    record.checkpoints.set(branchId, list);
  }
  return list;
}
