import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ConfigurationError,
  FileStore,
  InMemoryStore,
  type Message,
  type ModelMessage,
  type ReadMessagesOptions,
  type Store,
} from '@baton/core';
import type { RecordedRequest } from '@baton/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { HandoffBuilder, isHandoffToolName } from '../src/index.js';
import { danglingToolCalls, deskAgents, tempDir } from './support/helpers.js';
import { killChildWhen } from './support/killChild.js';
import { refundTurn, windowDesk } from './support/windowDesk.js';

const childScript = fileURLToPath(new URL('./support/windowCrashChild.ts', import.meta.url));

const WINDOW = 7;
const TURNS = 12;

const contents = (messages: readonly { content: string }[]) => messages.map((m) => m.content);

/** A model input without message ids (they differ between runs); system instructions included. */
function strip(requests: readonly RecordedRequest[]): Omit<ModelMessage, 'id'>[][] {
  return requests.map((request) => request.messages.map(({ id: _id, ...rest }) => rest));
}

/** The stored messages an agent sees: with handoffHistory 'omit' (default) handoff calls and results left out. */
function visible(stored: readonly Message[], mode: 'omit' | 'keep' = 'omit'): Message[] {
  if (mode === 'keep') return [...stored];
  return stored.filter(
    (m) =>
      !(m.role === 'tool' && isHandoffToolName(m.toolName)) &&
      !(m.role === 'assistant' && m.content === '' && (m.toolCalls ?? []).every((c) => isHandoffToolName(c.name))),
  );
}

/**
 * Checks one model input against the whole stored branch: its messages (instructions aside) are a
 * run of consecutive visible messages, each once, at most `window` of them, not starting with a tool
 * result, and as long as the window allows (a window that would start with a tool result drops it).
 */
function expectWindowed(
  request: RecordedRequest,
  stored: readonly Message[],
  window: number,
  mode: 'omit' | 'keep' = 'omit',
): void {
  const ids = request.messages.filter((m) => m.role !== 'system').map((m) => m.id);
  expect(new Set(ids).size).toBe(ids.length);
  const seen = visible(stored, mode).map((m) => m.id);
  const first = seen.indexOf(ids[0]!);
  expect(first).toBeGreaterThanOrEqual(0);
  expect(seen.slice(first, first + ids.length)).toEqual(ids);
  expect(ids.length).toBeLessThanOrEqual(window);
  if (first > 0) expect(ids.length).toBeGreaterThanOrEqual(window - 1);
  expect(request.messages.find((m) => m.role !== 'system')?.role).not.toBe('tool');
}

/** A store that keeps the range and the size of every `readMessages` answer. */
function readCounting(inner: Store): {
  store: Store;
  reads: { options: ReadMessagesOptions | undefined; count: number }[];
} {
  const reads: { options: ReadMessagesOptions | undefined; count: number }[] = [];
  const store = new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop !== 'readMessages') return typeof value === 'function' ? value.bind(target) : value;
      return async (sessionId: string, branchId: string, options?: ReadMessagesOptions) => {
        const messages = await target.readMessages(sessionId, branchId, options);
        reads.push({ options, count: messages.length });
        return messages;
      };
    },
  });
  return { store, reads };
}

describe('historyWindow: a bounded history for model input', () => {
  let dispose: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await dispose?.();
    dispose = undefined;
  });

  it('refuses a window that is not an integer ≥ 1, and a nested workflow that sets one', () => {
    const { triage, billing } = deskAgents();
    for (const bad of [0, -3, 2.5, Number.NaN, '10' as unknown as number]) {
      expect(() => new HandoffBuilder().participants(triage, billing).historyWindow({ messages: bad })).toThrow(
        ConfigurationError,
      );
    }
    expect(() => new HandoffBuilder().participants(triage, billing).historyWindow(undefined as never)).toThrow(
      /historyWindow\(\{ messages \}\)/,
    );
    const inner = new HandoffBuilder({ name: 'inner' })
      .participants(triage, billing)
      .historyWindow({ messages: 10 })
      .build();
    expect(() => inner.asExecutor({ name: 'team', description: 'A team.' })).toThrow(/historyWindow\(\)/);
  });

  // 'keep' with a window of 6 loads exactly 6 visible messages starting with a tool result (the previous refund's): the load must read one more.
  for (const [handoffHistory, window] of [
    ['omit', WINDOW],
    ['keep', 6],
  ] as const) {
    it(`each model call sees the newest messages, whole tool groups, the same continuously and after a restore in a fresh process on every call (handoffHistory '${handoffHistory}', window ${window})`, async () => {
      // Continuously: one workflow object for every turn.
      const continuous = windowDesk(new InMemoryStore(), { window, handoffHistory });
      for (let order = 1; order <= TURNS; order += 1)
        await refundTurn(() => continuous.workflow.session({ id: 'w' }), order);

      // Restored: a new FileStore object and a new workflow (new agents) for every call, as a new process would.
      const dir = await tempDir();
      dispose = dir.dispose;
      const triage: RecordedRequest[] = [];
      const billing: RecordedRequest[] = [];
      const opened: FileStore[] = [];
      const fresh: ReturnType<typeof windowDesk>[] = [];
      const open = async () => {
        const store = new FileStore({ directory: dir.path });
        opened.push(store);
        const desk = windowDesk(store, { window, handoffHistory });
        fresh.push(desk);
        return desk.workflow.session({ id: 'w' });
      };
      for (let order = 1; order <= TURNS; order += 1) await refundTurn(open, order);
      for (const desk of fresh) {
        triage.push(...desk.triageModel.requests);
        billing.push(...desk.billingModel.requests);
      }

      expect(strip(triage)).toEqual(strip(continuous.triageModel.requests));
      expect(strip(billing)).toEqual(strip(continuous.billingModel.requests));
      // What the executor itself is given (ExecutorInput.history) is the same too, and never starts with a tool result.
      const histories = fresh.flatMap((desk) => desk.billingHistories);
      const shape = (list: Message[][]) =>
        list.map((history) => history.map((m) => `${m.role}:${m.toolCallId ?? ''}:${m.content}`));
      expect(shape(histories)).toEqual(shape(continuous.billingHistories));
      for (const history of histories) expect(history[0]?.role).not.toBe('tool');
      const stored = await opened.at(-1)!.readMessages('w', 'main');
      expect(stored).toHaveLength(TURNS * 6);
      expect(danglingToolCalls(stored)).toEqual([]);
      for (const request of [...triage, ...billing]) expectWindowed(request, stored, window, handoffHistory);
      // The window bites: late calls see a few of the visible messages, starting mid-conversation.
      expect(billing.at(-1)!.messages.filter((m) => m.role !== 'system').length).toBeGreaterThanOrEqual(window - 1);
      expect(billing.at(-1)!.messages.at(-1)).toMatchObject({ role: 'tool', toolCallId: `r-${TURNS}` });
      for (const store of opened) await store.close();
    });
  }

  it('opening a long windowed session reads a range near the head, not the whole branch; without a window it reads everything', async () => {
    const dir = await tempDir();
    dispose = dir.dispose;
    for (const makeStore of [() => new InMemoryStore(), () => new FileStore({ directory: dir.path })]) {
      const shared = makeStore();
      const writer = windowDesk(shared, { window: WINDOW });
      for (let order = 1; order <= 40; order += 1)
        await refundTurn(() => writer.workflow.session({ id: 'long' }), order);
      for await (const _ of (await writer.workflow.session({ id: 'long' })).send('refund order 41')) {
        // drain: the turn pauses on the refund approval
      }
      const stored = await shared.readMessages('long', 'main');

      const windowed = readCounting(shared);
      const session = await windowDesk(windowed.store, { window: WINDOW }).workflow.session({ id: 'long' });
      expect(session.pendingRequests).toHaveLength(1);
      expect(windowed.reads.every((read) => (read.options?.fromSeq ?? 1) > 1)).toBe(true);
      const read = windowed.reads.reduce((sum, r) => sum + r.count, 0);
      expect(read).toBeLessThanOrEqual(3 * WINDOW);
      // What it holds is the newest part of the branch, in order, ending at the head.
      expect(session.messages.map((m) => m.id)).toEqual(stored.slice(-session.messages.length).map((m) => m.id));
      for await (const _ of session.respond(session.pendingRequests[0]!.id, { approved: true })) {
        // drain
      }
      const after = await shared.readMessages('long', 'main');
      expect(after.at(-1)).toMatchObject({ role: 'assistant', agent: 'billing', content: 'Refunded order 41.' });
      expect(danglingToolCalls(after)).toEqual([]);

      const whole = readCounting(shared);
      await windowDesk(whole.store).workflow.session({ id: 'long' });
      expect(whole.reads).toEqual([{ options: {}, count: after.length }]);
      if (shared instanceof FileStore) await shared.close();
    }
  });

  it('a fork opened with a window reads across its parent reference and continues as its parent would have', async () => {
    const continuous = windowDesk(new InMemoryStore(), { window: WINDOW });
    for (let order = 1; order <= 10; order += 1)
      await refundTurn(() => continuous.workflow.session({ id: 'w' }), order);

    const store = new InMemoryStore();
    const first = windowDesk(store, { window: WINDOW });
    for (let order = 1; order <= 6; order += 1) await refundTurn(() => first.workflow.session({ id: 'f' }), order);
    await (await first.workflow.session({ id: 'f' })).fork({ atSeq: 36, branchId: 'alt' });
    const desks: ReturnType<typeof windowDesk>[] = [];
    const reads: { options: ReadMessagesOptions | undefined; count: number }[] = [];
    const open = async () => {
      const counting = readCounting(store);
      const desk = windowDesk(counting.store, { window: WINDOW });
      desks.push(desk);
      const session = await desk.workflow.session({ id: 'f', branch: 'alt' });
      reads.push(...counting.reads);
      return session;
    };
    for (let order = 7; order <= 10; order += 1) await refundTurn(open, order);
    const billing = desks.flatMap((desk) => desk.billingModel.requests);
    expect(billing).toHaveLength(8);
    expect(strip(billing)).toEqual(strip(continuous.billingModel.requests).slice(-8));
    const fork = await store.readMessages('f', 'alt');
    expect(fork).toHaveLength(60);
    expect(danglingToolCalls(fork)).toEqual([]);
    // Every open after the fork's first checkpoint read a range (the first reads the branch whole: no checkpoint yet).
    expect(reads.slice(1).every((read) => (read.options?.fromSeq ?? 1) > 1)).toBe(true);
    expect(reads.slice(1).some((read) => (read.options?.fromSeq ?? 1) <= 36)).toBe(true);
  });

  it('when hidden handoff messages leave too few visible ones, the load reads further back until the agent sees more than the window', async () => {
    const store = new InMemoryStore();
    const first = await windowDesk(store, { window: 4 }).workflow.session({ id: 'hidden' });
    await refundTurn(async () => first, 1);
    // 20 more user messages, each followed by a handoff call and its result, which agents do not see.
    const head = (await store.readMessages('hidden', 'main')).length;
    const extra: Message[] = [];
    for (let i = 1; i <= 20; i += 1) {
      const seq = head + extra.length + 1;
      const createdAt = new Date().toISOString();
      extra.push({ id: `u-${i}`, seq, role: 'user', content: `question ${i}`, createdAt });
      extra.push({
        id: `h-${i}`,
        seq: seq + 1,
        role: 'assistant',
        agent: 'triage',
        content: '',
        toolCalls: [{ id: `hc-${i}`, name: 'handoff_to_billing', arguments: '{}' }],
        createdAt,
      });
      extra.push({
        id: `r-${i}`,
        seq: seq + 2,
        role: 'tool',
        agent: 'triage',
        content: 'Transferred.',
        toolCallId: `hc-${i}`,
        toolName: 'handoff_to_billing',
        createdAt,
      });
    }
    await store.appendMessages('hidden', 'main', extra);
    // A checkpoint at the new head (routing idle, as after a turn), so the load has nothing to replay.
    const checkpoint = (await store.loadCheckpoint('hidden', 'main'))!;
    await store.saveCheckpoint({
      ...checkpoint,
      id: 'at-head',
      parentId: checkpoint.id,
      step: checkpoint.step + 1,
      throughSeq: head + extra.length,
      createdAt: new Date().toISOString(),
    });

    const counting = readCounting(store);
    const desk = windowDesk(counting.store, { window: 4 });
    const session = await desk.workflow.session({ id: 'hidden' });
    expect(counting.reads.length).toBeGreaterThan(1);
    expect(counting.reads.every((read) => (read.options?.fromSeq ?? 1) > 1)).toBe(true);
    for await (const _ of session.send('refund order 2')) {
      // drain: triage hands off, billing pauses on the refund
    }
    const [triageInput] = desk.triageModel.requests;
    expect(contents(triageInput!.messages.filter((m) => m.role !== 'system'))).toEqual([
      'question 18',
      'question 19',
      'question 20',
      'refund order 2',
    ]);
  });

  it('closing after a windowed load gives context providers (episodes) the whole branch; fork and terminateWhen see it too', async () => {
    const dir = await tempDir();
    dispose = dir.dispose;
    const closed: Message[][] = [];
    const terminations: number[] = [];
    const store = new FileStore({ directory: dir.path });
    const writer = windowDesk(store, { window: WINDOW });
    for (let order = 1; order <= 10; order += 1) await refundTurn(() => writer.workflow.session({ id: 'ep' }), order);
    await store.close();

    const reopened = new FileStore({ directory: dir.path });
    const desk = windowDesk(reopened, {
      window: WINDOW,
      providers: [{ name: 'episodes', onSessionClose: async ({ messages }) => void closed.push([...messages]) }],
      terminateWhen: (messages) => void terminations.push(messages.length),
    });
    const session = await desk.workflow.session({ id: 'ep' });
    expect(session.messages.length).toBeLessThan(60);
    expect(session.messages[0]!.seq).toBeGreaterThan(1);
    // A fork early in the branch needs messages the window did not load: they are read.
    const fork = await session.fork({ atSeq: 6, branchId: 'early' });
    expect(fork.messages.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    await refundTurn(async () => session, 11);
    expect(terminations).toEqual([66]);
    await session.close({ reason: 'resolved' });

    const stored = await reopened.readMessages('ep', 'main');
    expect(closed).toHaveLength(1);
    expect(closed[0]!.map((m) => m.id)).toEqual(stored.map((m) => m.id));
    expect(closed[0]![0]).toMatchObject({ seq: 1, role: 'user', content: 'refund order 1' });
    await reopened.close();
  });

  // Above killWhenStarted's 40 s for the child (a tsx start-up, slow on a loaded machine), so that its error, quoting the child, is the one seen.
  it('a windowed session killed with SIGKILL mid-tool resumes in a new process with the same model inputs as an uninterrupted run, nothing run twice', {
    timeout: 90_000,
  }, async () => {
    const KILL_AT = 9;
    const dir = await tempDir();
    dispose = dir.dispose;
    const directory = join(dir.path, 'store');
    const log = join(dir.path, 'refunds.log');
    writeFileSync(log, '');
    await killWhenStarted(directory, log, KILL_AT);
    expect(readFileSync(log, 'utf8')).toContain(`start:${KILL_AT}:child`);
    expect(readFileSync(log, 'utf8')).not.toContain(`done:${KILL_AT}:child`);

    // The uninterrupted run of the same script, for its model inputs.
    const reference = windowDesk(new InMemoryStore(), { window: WINDOW });
    for (let order = 1; order <= TURNS; order += 1)
      await refundTurn(() => reference.workflow.session({ id: 'windowed' }), order);

    const store = new FileStore({ directory });
    const desk = windowDesk(store, { window: WINDOW, log, who: 'parent' });
    const session = await desk.workflow.session({ id: 'windowed' });
    // The refund never finished: the turn is paused on its approval again.
    expect(session.pendingRequests).toMatchObject([{ type: 'tool_approval', toolCallId: `r-${KILL_AT}` }]);
    for await (const _ of session.respond(session.pendingRequests[0]!.id, { approved: true })) {
      // drain
    }
    for (let order = KILL_AT + 1; order <= TURNS; order += 1) await refundTurn(async () => session, order);

    const after = strip(desk.billingModel.requests);
    expect(after).toEqual(strip(reference.billingModel.requests).slice(-after.length));
    expect(strip(desk.triageModel.requests)).toEqual(strip(reference.triageModel.requests).slice(-(TURNS - KILL_AT)));
    const stored = await store.readMessages('windowed', 'main');
    expect(stored.map((m) => m.seq)).toEqual(stored.map((_, i) => i + 1));
    expect(danglingToolCalls(stored)).toEqual([]);
    expect(stored.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(
      Array.from({ length: TURNS }, (_, i) => `refund order ${i + 1}`),
    );
    for (const request of desk.billingModel.requests) expectWindowed(request, stored, WINDOW);
    const done = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .filter((line) => line.startsWith('done:'));
    expect(done).toEqual(
      Array.from({ length: TURNS }, (_, i) => `done:${i + 1}:${i + 1 < KILL_AT ? 'child' : 'parent'}`),
    );
    await store.close();
  });
});

/** Runs the child until the refund of order `killAt` started, then kills it with SIGKILL. */
async function killWhenStarted(directory: string, log: string, killAt: number): Promise<void> {
  const started = () => readFileSync(log, 'utf8').includes(`start:${killAt}:child`);
  await killChildWhen(
    childScript,
    [directory, log, String(WINDOW), String(killAt)],
    started,
    `The refund of order ${killAt}`,
    40_000,
  );
}
