import { NotFoundError, type TenantScope } from '@baton/core';
import { LRUCache } from 'lru-cache';
import { tenantMatch } from '../collections/inputGuards.js';
import type { MongoContext } from '../collections/mongoContext.js';

/**
 * The tenant of recently used sessions (`null`: none), in process memory, so that a scoped call on
 * messages, branches or checkpoints needs no read of the session to know it may touch it. A
 * session's tenant never changes after it is created, so a cached match stays true as long as the
 * session exists; a mismatch is always re-read (never trusted from the cache). Filled by
 * `createSession`, `getSession` and the first check; dropped when this store deletes the session.
 * Bounded: past `capacity` sessions the least recently used is forgotten (0 turns it off; an
 * `lru-cache` LRU).
 */
export class SessionTenants {
  /** `undefined` when the capacity is 0 (off). The tenant is stored as `''` for none (`lru-cache` holds no `null`). */
  readonly #tenants: LRUCache<string, string> | undefined;

  /** @param capacity how many sessions to remember */
  constructor(readonly capacity: number) {
    this.#tenants = capacity === 0 ? undefined : new LRUCache({ max: capacity });
  }

  /** The cached tenant (`null`: none), or `undefined` when not cached. */
  get(sessionId: string): string | null | undefined {
    const tenant = this.#tenants?.get(sessionId);
    return tenant === '' ? null : tenant;
  }

  /** Records a session's tenant. */
  set(sessionId: string, tenantId: string | undefined): void {
    this.#tenants?.set(sessionId, tenantId ?? '');
  }

  /** Forgets a session (after a delete). */
  forget(sessionId: string): void {
    this.#tenants?.delete(sessionId);
  }
}

/**
 * The filter fragment that names a session's tenant on its documents: `{ tenantId }`, or
 * `{ tenantId: { $exists: false } }` for a session without one. Every command on messages,
 * branches, checkpoints and pending writes of a session carries it, and every document written
 * holds the field ({@link tenantField}), so no command can reach another tenant's documents even
 * with a wrong session id.
 */
export type TenantKey = { tenantId: string | { $exists: false } };

/** The `tenantId` field a document of the session is written with (`{}` for a session without a tenant). */
export function tenantField(key: TenantKey): { tenantId?: string } {
  return typeof key.tenantId === 'string' ? { tenantId: key.tenantId } : {};
}

/**
 * Checks that the session is in the scope's tenant (see `TenantScope`: no tenant id matches only
 * sessions without one): from the cache when it knows a match, else one read of the session with
 * the tenant in its filter.
 * @returns the session's {@link TenantKey}, for the filters and documents of the call
 * @throws {NotFoundError} when the session does not exist for this tenant; {@link InvalidIdError} for an unsafe tenant id
 */
export async function requireTenant(
  context: MongoContext,
  sessionId: string,
  scope: TenantScope | undefined,
): Promise<TenantKey> {
  const filter = tenantMatch(scope);
  const wanted = typeof filter.tenantId === 'string' ? filter.tenantId : null;
  if (context.tenants.get(sessionId) === wanted) return filter;
  const found = await context.collections.sessions.findOne({ _id: sessionId, ...filter }, { projection: { _id: 1 } });
  if (found === null) throw new NotFoundError(`Session ${JSON.stringify(sessionId)} does not exist.`);
  context.tenants.set(sessionId, wanted ?? undefined);
  return filter;
}
