/**
 * The conversation every corpus folder holds, and the checks a store that loaded one must pass.
 * `writeCorpus.ts` plays the scenario into a store to write a corpus; the corpus tests load saved
 * corpora through each store's public API and check them with {@link checkCorpus}, then resume the
 * paused turn with {@link resumeCorpus}.
 *
 * The scenario, in session `corpus-1` of tenant `acme`, user `u-42`: the user writes
 * "I was charged twice for order 1234", triage hands off to billing, billing asks the user for the
 * account id (a paused turn: the newest checkpoint holds the `user_input` request); an earlier
 * checkpoint carries a pending write; a fork `alt` refers to the first message of `main`; and a
 * closed session `corpus-0` left an episode.
 */
import { agent, type Episode, type Store } from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { HandoffBuilder } from '@baton/handoff';
import { expect } from 'vitest';

/** The session, tenant and user of the corpus. */
export const CORPUS = { sessionId: 'corpus-1', tenantId: 'acme', userId: 'u-42', closedSessionId: 'corpus-0' } as const;
const scope = { tenantId: CORPUS.tenantId };
const FIRST_MESSAGE = 'I was charged twice for order 1234';

/** The triage and billing agents of the scenario; billing answers the account id it is given. */
function deskAgents() {
  const triage = agent({
    name: 'triage',
    description: 'Routes the customer.',
    instructions: 'You are triage.',
    model: new ScriptedModel(() => ({
      toolCalls: [{ id: 'to_billing', name: 'handoff_to_billing', arguments: { reason: 'a charge' } }],
    })),
  });
  const billing = agent({
    name: 'billing',
    description: 'Answers billing questions.',
    instructions: 'You are billing.',
    model: new ScriptedModel((request) => {
      const last = request.messages.at(-1);
      if (last?.role === 'tool' && last.toolName === 'request_user_input')
        return { text: `Thanks, I found account ${last.content}.` };
      return {
        toolCalls: [{ id: 'ask_account', name: 'request_user_input', arguments: { prompt: 'Your account id?' } }],
      };
    }),
  });
  return [triage, billing] as const;
}

function workflow(store: Store) {
  const [triage, billing] = deskAgents();
  return new HandoffBuilder({ name: 'corpus-desk' })
    .participants(triage, billing)
    .store(store)
    .checkpoints({ every: 'step', keep: 'all' })
    .build();
}

/** The episode the closed session left. */
export const CORPUS_EPISODE: Episode = {
  id: CORPUS.closedSessionId,
  sessionId: CORPUS.closedSessionId,
  tenantId: CORPUS.tenantId,
  userId: CORPUS.userId,
  startedAt: '2026-11-01T09:00:00.000Z',
  endedAt: '2026-11-01T09:04:00.000Z',
  closedReason: 'resolved',
  agents: ['triage', 'shipping'],
  transcript: [
    { role: 'user', content: 'Where is my parcel 88?' },
    { role: 'assistant', agent: 'shipping', content: 'Parcel 88 arrives on Tuesday.' },
  ],
  summary: 'Parcel 88 arrives on Tuesday.',
  keywords: ['parcel', 'shipping'],
  metadata: { channel: 'web' },
};

/** Plays the scenario into an empty store (the writer of the corpus). */
export async function playCorpusScenario(store: Store): Promise<void> {
  const session = await workflow(store).session({
    id: CORPUS.sessionId,
    tenantId: CORPUS.tenantId,
    userId: CORPUS.userId,
  });
  for await (const _event of session.send(FIRST_MESSAGE));
  await store.forkBranch(
    CORPUS.sessionId,
    { branchId: 'alt', parent: { branchId: 'main', atSeq: 1 }, state: { note: 'a what-if' } },
    scope,
  );
  const [first] = await store.listCheckpoints(CORPUS.sessionId, 'main', scope);
  if (first === undefined) throw new Error('The scenario saved no checkpoint.');
  await store.putPendingWrites(
    CORPUS.sessionId,
    'main',
    first.id,
    [
      {
        toolCallId: 'lookup-1',
        toolName: 'lookup_order',
        agent: 'billing',
        content: '{"order":"1234"}',
        isError: false,
        durationMs: 4,
        createdAt: first.createdAt,
      },
    ],
    scope,
  );
  await store.createSession({
    id: CORPUS.closedSessionId,
    tenantId: CORPUS.tenantId,
    userId: CORPUS.userId,
    createdAt: CORPUS_EPISODE.startedAt,
  });
  await store.saveEpisode(CORPUS_EPISODE);
}

/** Checks, through the public API, everything a loaded corpus must hold. */
export async function checkCorpus(store: Store): Promise<void> {
  const session = await store.getSession(CORPUS.sessionId, scope);
  expect(session).toMatchObject({ id: CORPUS.sessionId, tenantId: 'acme', userId: 'u-42', status: 'active' });
  expect(session).not.toHaveProperty('schemaVersion');
  expect(await store.getSession(CORPUS.sessionId)).toBeUndefined();

  const main = await store.readMessages(CORPUS.sessionId, 'main', scope);
  expect(main.map((m) => [m.seq, m.role, m.agent ?? null])).toEqual([
    [1, 'user', null],
    [2, 'assistant', 'triage'],
    [3, 'tool', 'triage'],
    [4, 'assistant', 'billing'],
  ]);
  expect(main[0]?.content).toBe(FIRST_MESSAGE);
  expect(main[2]).toMatchObject({
    toolCallId: 'to_billing',
    content: 'Transferred to billing.',
    metadata: { control: { kind: 'handoff', target: 'billing' } },
  });
  expect(main[3]?.toolCalls).toEqual([
    { id: 'ask_account', name: 'request_user_input', arguments: '{"prompt":"Your account id?"}' },
  ]);
  for (const message of main) expect(message).not.toHaveProperty('schemaVersion');
  await expect(store.readMessages(CORPUS.sessionId, 'main', { tenantId: 'globex' })).rejects.toThrow(/does not exist/);

  const branches = await store.listBranches(CORPUS.sessionId, scope);
  expect(branches.map((b) => b.id).sort()).toEqual(['alt', 'main']);
  expect(branches.find((b) => b.id === 'alt')).toMatchObject({
    parent: { branchId: 'main', atSeq: 1 },
    state: { note: 'a what-if' },
  });
  expect((await store.readMessages(CORPUS.sessionId, 'alt', scope)).map((m) => m.content)).toEqual([FIRST_MESSAGE]);

  const manifest = await store.listCheckpoints(CORPUS.sessionId, 'main', scope);
  expect(manifest.length).toBeGreaterThanOrEqual(2);
  const newest = await store.loadCheckpoint(CORPUS.sessionId, 'main', undefined, scope);
  expect(newest).toMatchObject({ schemaVersion: 1, id: manifest.at(-1)?.id, throughSeq: 4 });
  expect(newest?.pendingRequests).toEqual([
    expect.objectContaining({ type: 'user_input', prompt: 'Your account id?', agent: 'billing' }),
  ]);
  const first = await store.loadCheckpoint(CORPUS.sessionId, 'main', manifest[0]?.id, scope);
  expect(first?.pendingWrites).toEqual([
    expect.objectContaining({ toolCallId: 'lookup-1', toolName: 'lookup_order', content: '{"order":"1234"}' }),
  ]);

  expect(await store.getEpisode(CORPUS.closedSessionId, scope)).toEqual(CORPUS_EPISODE);
  expect(await store.findEpisodes({ ...scope, userId: CORPUS.userId })).toEqual([CORPUS_EPISODE]);
}

/** Resumes the corpus's paused turn in a workflow over `store`: the answer reaches billing, which finishes the turn. */
export async function resumeCorpus(store: Store): Promise<void> {
  const session = await workflow(store).session({
    id: CORPUS.sessionId,
    tenantId: CORPUS.tenantId,
    userId: CORPUS.userId,
    branch: 'main',
    create: false,
  });
  expect(session.activeAgent).toBe('billing');
  const [request] = session.pendingRequests;
  expect(request).toMatchObject({ type: 'user_input', prompt: 'Your account id?' });
  for await (const _event of session.respond(request!.id, 'AC-99812'));
  const messages = await store.readMessages(CORPUS.sessionId, 'main', scope);
  expect(messages.slice(4).map((m) => [m.role, m.agent ?? null, m.content])).toEqual([
    ['tool', 'billing', 'AC-99812'],
    ['assistant', 'billing', 'Thanks, I found account AC-99812.'],
  ]);
  expect(messages.filter((m) => m.content === FIRST_MESSAGE)).toHaveLength(1);
  expect(session.pendingRequests).toEqual([]);
}
