import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  agent,
  type ContextProvider,
  FileStore,
  InvalidInputError,
  type Message,
  type ModelRequest,
} from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { HandoffBuilder } from '@baton/handoff';
import { WorkingMemory } from '@baton/memory';
import { afterEach, describe, expect, it } from 'vitest';

const lastUserText = (request: ModelRequest) => request.messages.findLast((m) => m.role === 'user')?.content ?? '';
const drain = async (events: AsyncIterable<unknown>) => {
  for await (const _ of events) {
    // events are not needed here
  }
};

/** A desk on a FileStore at `directory`, as a new process builds it: triage hands refunds to billing. */
function deskOn(directory: string, memory: ContextProvider) {
  const store = new FileStore({ directory });
  const triageModel = new ScriptedModel((request) =>
    request.messages.at(-1)?.role === 'user'
      ? { toolCalls: [{ name: 'handoff_to_billing', arguments: { reason: 'refund' } }] }
      : { text: 'Anything else?' },
  );
  const billingModel = new ScriptedModel((request) => ({
    text: `Refunded ${/order (\d+)/.exec(lastUserText(request))?.[1] ?? '?'}.`,
  }));
  const triage = agent({ name: 'triage', description: 'Routes.', instructions: 'Route.', model: triageModel });
  const billing = agent({ name: 'billing', description: 'Refunds.', instructions: 'Refund.', model: billingModel });
  const desk = new HandoffBuilder({ name: 'budgeted-desk' })
    .participants(triage, billing)
    .coordinator(triage)
    .store(store)
    .memory(memory)
    .build();
  return { desk, store, triageModel, billingModel };
}

/** What a model saw, without the ids a run makes. */
const shapeOf = (request: Pick<ModelRequest, 'messages'> | undefined) =>
  request?.messages.map((m) => ({ role: m.role, content: m.content, calls: m.toolCalls?.map((c) => c.name) }));

describe("opening a session by working memory's budget (FileStore, a new store per open)", () => {
  const directories: string[] = [];
  afterEach(async () => {
    for (const directory of directories.splice(0)) await rm(directory, { recursive: true, force: true });
  });
  const tempDir = async () => {
    const directory = await mkdtemp(join(tmpdir(), 'baton-budget-open-'));
    directories.push(directory);
    return directory;
  };

  it('reads only the newest part the budget can send, and the model inputs equal those of a whole-history open', async () => {
    const directory = await tempDir();
    const memory = new WorkingMemory({ maxTokens: 60 });
    expect(memory.maxHistoryMessages).toBe(20);
    const writer = deskOn(directory, memory);
    const chat = await writer.desk.session({ id: 'long-chat' });
    for (let order = 1; order <= 40; order += 1) await drain(chat.send(`refund order ${order}`));
    await writer.store.close();
    const copy = await tempDir();
    await cp(directory, copy, { recursive: true });

    // A new process opens it with the budget: it holds the newest part only, yet the whole branch stays readable.
    const budgeted = deskOn(directory, new WorkingMemory({ maxTokens: 60 }));
    const session = await budgeted.desk.session({ id: 'long-chat' });
    const stored = await budgeted.store.readMessages('long-chat', 'main');
    expect(session.messages[0]!.seq).toBeGreaterThan(1);
    expect(session.messages.length).toBeLessThan(stored.length / 2);
    expect(session.messages).toEqual(stored.slice(-session.messages.length));

    // The same memory without its bound (the whole history is read): the same model inputs, word for word.
    const bare = new WorkingMemory({ maxTokens: 60 });
    const unbounded = deskOn(copy, { name: bare.name, prepareModelInput: (m, c) => bare.prepareModelInput(m, c) });
    const whole = await unbounded.desk.session({ id: 'long-chat' });
    expect(whole.messages).toHaveLength(stored.length);
    await drain(session.send('refund order 41'));
    await drain(whole.send('refund order 41'));
    expect(shapeOf(budgeted.triageModel.requests.at(0))).toEqual(shapeOf(unbounded.triageModel.requests.at(0)));
    expect(shapeOf(budgeted.billingModel.requests.at(-1))).toEqual(shapeOf(unbounded.billingModel.requests.at(-1)));
    expect(budgeted.billingModel.requests.at(-1)!.messages.at(-1)).toMatchObject({ content: 'refund order 41' });
    // Working memory did trim: the model saw less than the branch.
    expect(budgeted.triageModel.requests[0]!.messages.length).toBeLessThan(session.messages.length);
    await budgeted.store.close();
    await unbounded.store.close();
  });

  it('keeps the whole history readable, lazily: history() pages, readMessages ranges; bad bounds are named', async () => {
    const directory = await tempDir();
    const writer = deskOn(directory, new WorkingMemory({ maxTokens: 30 }));
    const chat = await writer.desk.session({ id: 'paged-chat' });
    for (let order = 1; order <= 12; order += 1) await drain(chat.send(`refund order ${order}`));
    await writer.store.close();

    const reader = deskOn(directory, new WorkingMemory({ maxTokens: 30 }));
    const session = await reader.desk.session({ id: 'paged-chat' });
    const stored = await reader.store.readMessages('paged-chat', 'main');
    expect(session.messages.length).toBeLessThan(stored.length);
    const paged: Message[] = [];
    for await (const message of session.history({ pageSize: 7 })) paged.push(message);
    expect(paged).toEqual(stored);
    const firstUser: Message[] = [];
    for await (const message of session.history({ pageSize: 2 })) {
      firstUser.push(message);
      if (message.role === 'user') break;
    }
    expect(firstUser.at(-1)).toMatchObject({ role: 'user', content: 'refund order 1' });
    expect(await session.readMessages({ last: 3 })).toEqual(stored.slice(-3));
    expect(await session.readMessages({ fromSeq: 2, throughSeq: 5 })).toEqual(stored.slice(1, 5));
    expect(await session.readMessages({ throughSeq: 10, last: 2 })).toEqual(stored.slice(8, 10));
    await expect(session.readMessages({ last: 0 })).rejects.toThrow(InvalidInputError);
    await expect(session.readMessages({ fromSeq: 1.5 })).rejects.toThrow(/fromSeq must be an integer ≥ 1.*1\.5/);
    const bad = session.history({ pageSize: -1 })[Symbol.asyncIterator]();
    await expect(bad.next()).rejects.toThrow(InvalidInputError);
    await reader.store.close();
  });

  it('reads the whole history when the budget does not bound it (a pinned first message), and refuses a bad bound at build', async () => {
    const directory = await tempDir();
    const writer = deskOn(directory, new WorkingMemory({ maxTokens: 30, pinFirstUserMessage: true }));
    const chat = await writer.desk.session({ id: 'pinned-chat' });
    for (let order = 1; order <= 6; order += 1) await drain(chat.send(`refund order ${order}`));
    await writer.store.close();
    const reader = deskOn(directory, new WorkingMemory({ maxTokens: 30, pinFirstUserMessage: true }));
    const session = await reader.desk.session({ id: 'pinned-chat' });
    expect(session.messages[0]!.seq).toBe(1);
    await reader.store.close();
    expect(() =>
      deskOn(directory, { name: 'broken', maxHistoryMessages: 0, prepareModelInput: (messages) => messages }),
    ).toThrow(/maxHistoryMessages 0; it must be an integer ≥ 1/);
  });
});
