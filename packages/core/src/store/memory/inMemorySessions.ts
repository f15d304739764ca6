import type { Session } from '../../conversation/session.js';
import { ConcurrencyError, NotFoundError } from '../../errors.js';
import type { TenantScope } from '../store.js';
import { assertBranchId, assertSessionId } from '../storeRules.js';
import { assertTenantScope, inTenant } from '../tenantScope.js';
import {
  evictForRoom,
  newSessionRecord,
  type SessionLimits,
  type SessionRecord,
  touchRecord,
} from './inMemoryRecords.js';

/**
 * {@link InMemoryStore}'s sessions: their records by id, least recently used first (every lookup
 * moves a record to the end), each found only within its tenant. Adding one to a full table first
 * evicts closed or idle sessions ({@link evictForRoom}).
 */
export class InMemorySessions {
  /** Every record by id, least recently used first (the store's `eraseUser` and asset totals walk it). */
  readonly byId = new Map<string, SessionRecord>();
  readonly #limits: SessionLimits;
  /** The record last in `byId` (the most recently used), when known. */
  #newest: SessionRecord | undefined;

  constructor(limits: SessionLimits) {
    this.#limits = limits;
  }

  /**
   * Adds the record of a new session (a valid document), making room for it first.
   * @throws {ConcurrencyError} when a session with its id exists
   */
  add(session: Session): void {
    if (this.byId.has(session.id)) throw new ConcurrencyError(`Session ${JSON.stringify(session.id)} already exists.`);
    evictForRoom(this.byId, this.#limits, Date.now());
    const record = newSessionRecord(session, Date.now());
    this.byId.set(session.id, record);
    this.#newest = record;
  }

  /** The session's record when it exists in the scope's tenant, marked as just used. */
  find(id: string, scope: TenantScope = {}): SessionRecord | undefined {
    assertSessionId(id);
    const record = this.byId.get(id);
    assertTenantScope(scope);
    if (record === undefined || !inTenant(record.session, scope)) return undefined;
    // A turn's calls touch one session over and over: when it is already the newest, only its time moves.
    if (record === this.#newest) record.touchedAt = Date.now();
    else {
      touchRecord(this.byId, record, Date.now());
      this.#newest = record;
    }
    return record;
  }

  /** The session's record (see {@link find}). @throws {NotFoundError} when there is none */
  required(id: string, scope: TenantScope = {}): SessionRecord {
    const record = this.find(id, scope);
    if (record === undefined) throw new NotFoundError(`Session ${JSON.stringify(id)} does not exist.`);
    return record;
  }

  /** The record of a session whose branch exists. @throws {NotFoundError} otherwise */
  withBranch(sessionId: string, branchId: string, scope: TenantScope): SessionRecord {
    const record = this.required(sessionId, scope);
    assertBranchId(branchId);
    if (!record.branches.has(branchId)) throw new NotFoundError(`Branch ${JSON.stringify(branchId)} does not exist.`);
    return record;
  }
}
