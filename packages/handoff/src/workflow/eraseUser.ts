import {
  assertValidId,
  type EraseUserInput,
  type EraseUserResult,
  type Executor,
  findOpenToolCalls,
  InvalidInputError,
  type Request,
  type Store,
  StoreError,
  withdrawRequests,
} from '@baton/core';

/**
 * Erases one user's data (a right-to-be-forgotten request) and every task the workflow's
 * participants queued outside the store for it: first each pending request of the user's sessions,
 * on every branch, is withdrawn through its participant's `Executor.withdrawRequests` (a
 * `HumanExecutor` removes the task, and with it the prompt that quotes the user, from its
 * `HumanQueue`); then `store.eraseUser` removes the sessions and episodes. Withdrawing first means a
 * failure leaves everything in place for a retry, instead of tasks nobody can find any more.
 *
 * @param store the workflow's store
 * @param participants the workflow's participants
 * @param input `{ tenantId?, userId }` as `store.eraseUser` takes it
 * @param outdate called with each erased session's id (session objects of it must not be used as they were)
 * @returns the counts `store.eraseUser` removed
 * @throws {InvalidInputError} when `input` has no `userId`; {@link InvalidIdError} for an unsafe id;
 *   {@link StoreError} when the pending requests of a session could not be read (e.g. a damaged
 *   checkpoint): everything is erased, but that session's queued tasks may remain; what a
 *   participant's `withdrawRequests` or the store throws
 */
export async function eraseUser(
  store: Store,
  participants: Iterable<Executor>,
  input: EraseUserInput,
  outdate: (sessionId: string) => void = () => {},
): Promise<EraseUserResult> {
  if (typeof input !== 'object' || input === null || typeof input.userId !== 'string') {
    throw new InvalidInputError(`eraseUser takes { userId, tenantId? }, not ${JSON.stringify(input)}.`);
  }
  assertValidId('user', input.userId);
  if (input.tenantId !== undefined) assertValidId('tenant', input.tenantId);
  const scope = input.tenantId === undefined ? {} : { tenantId: input.tenantId };
  // Without a tenant the listing spans every tenant; erasure without one means the untenanted sessions only.
  const listed = await store.listSessions({ ...scope, userId: input.userId });
  const sessions = listed.filter((s) => s.tenantId === input.tenantId);
  const requests: Request[] = [];
  const unreadable: Array<{ sessionId: string; error: unknown }> = [];
  for (const session of sessions) {
    try {
      for (const branch of await findOpenToolCalls(store, session.id, scope)) requests.push(...branch.requests);
    } catch (error) {
      unreadable.push({ sessionId: session.id, error });
    }
  }
  await withdrawRequests(participants, requests);
  let erased: EraseUserResult;
  try {
    erased = await store.eraseUser(input);
  } finally {
    for (const session of sessions) outdate(session.id);
  }
  const [first] = unreadable;
  if (first !== undefined) {
    throw new StoreError(
      `The user's data was erased, but the pending requests of session ${JSON.stringify(first.sessionId)} could not ` +
        `be read, so tasks queued for it (a HumanQueue's) may remain: remove them from the queue by hand.`,
      { cause: first.error },
    );
  }
  return erased;
}
