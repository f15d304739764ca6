import { cp } from 'node:fs/promises';
import {
  agent,
  type ContextProvider,
  FileStore,
  type Message,
  type ModelMessage,
  type ModelRequest,
  type Store,
  toModelMessage,
  tool,
} from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { HandoffBuilder } from '@baton/handoff';
import { WorkingMemory, type WorkingMemoryOptions } from '@baton/memory';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTempDirs } from '../packages/core/test/support/tempDirs.js';

/** Words of a message by its number: tiny, small, medium, large, and larger than the whole budget (orders 2000–2999: tiny only). */
const SIZES = [1, 4, 30, 180, 700];
const TINY = [1, 2, 3];
const words = (n: number, salt: number) => {
  const sizes = n >= 2000 && n < 3000 ? TINY : SIZES;
  return Array.from({ length: sizes[(n * 7 + salt) % sizes.length]! }, (_, i) => `w${(i * 31 + n) % 97}`).join(' ');
};
const orderOf = (text: string) => Number(/order (\d+)/.exec(text)?.[1] ?? 0);
const lastUserText = (request: ModelRequest) => request.messages.findLast((m) => m.role === 'user')?.content ?? '';
const drain = async (events: AsyncIterable<unknown>) => {
  for await (const _ of events) {
    // events are not needed here
  }
};

/** A store that counts the messages `readMessages` returned (calls go to the FileStore itself). */
function counting(inner: FileStore): { store: Store; read: () => number; reset: () => void } {
  let read = 0;
  const store = new Proxy(inner, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        const answer = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        if (key === 'readMessages') read += (answer as Message[]).length;
        return answer;
      };
    },
  });
  return { store, read: () => read, reset: () => (read = 0) };
}

/**
 * A desk on a FileStore at `directory`, as a new process builds it: triage hands every message to
 * billing; billing looks orders up (results tiny to huge), refunds orders ending in 9 (a tool that
 * needs approval: the turn pauses) and answers in texts of every size.
 */
function deskOn(directory: string, memory: ContextProvider, window?: number, process = 'reader') {
  const files = new FileStore({ directory });
  const counted = counting(files);
  // Tool call ids are counted, not random: ids are text the budget counts, and both opens must make the same ones.
  let calls = 0;
  const callId = () => `${process}-call-${++calls}`;
  const triageModel = new ScriptedModel((request) =>
    request.messages.at(-1)?.role === 'user'
      ? { toolCalls: [{ id: callId(), name: 'handoff_to_billing', arguments: { reason: 'billing' } }] }
      : { text: 'Anything else?' },
  );
  // One tool call per order at most: a huge result may be trimmed from the next input, which must not loop.
  const called = new Set<number>();
  const billingModel = new ScriptedModel((request) => {
    const order = orderOf(lastUserText(request));
    const first = request.messages.at(-1)!.role === 'user' && !called.has(order);
    called.add(order);
    if (first && order % 10 === 9) return { toolCalls: [{ id: callId(), name: 'refund', arguments: { order } }] };
    if (first && order % 3 === 0) return { toolCalls: [{ id: callId(), name: 'look_up', arguments: { order } }] };
    return { text: `Order ${order}: ${words(order, 2)}` };
  });
  const lookUp = tool({
    name: 'look_up',
    description: 'Looks an order up.',
    parameters: z.object({ order: z.number() }),
    execute: async ({ order }) => `order ${order}: ${words(order, 1)}`,
  });
  const refund = tool({
    name: 'refund',
    description: 'Refunds an order.',
    parameters: z.object({ order: z.number() }),
    needsApproval: true,
    execute: async ({ order }) => `refunded ${order}`,
  });
  const triage = agent({ name: 'triage', description: 'Routes.', instructions: 'Route.', model: triageModel });
  const billing = agent({
    name: 'billing',
    description: 'Orders and refunds.',
    instructions: 'Help with orders.',
    model: billingModel,
    tools: [lookUp, refund],
  });
  const builder = new HandoffBuilder({ name: 'budget-open-desk' })
    .participants(triage, billing)
    .coordinator(triage)
    .store(counted.store)
    .memory(memory);
  if (window !== undefined) builder.historyWindow({ messages: window });
  return { desk: builder.build(), files, counted, models: [triageModel, billingModel] };
}

/** The user's message of turn `order`: its text varies from one word to more than the budget. */
const userText = (order: number) => `order ${order} ${words(order, 0)}`;

/** Approves what the session waits on until it waits on nothing (a trimmed result may be asked for again). */
async function approveAll(session: Awaited<ReturnType<ReturnType<typeof deskOn>['desk']['session']>>) {
  for (let rounds = 0; session.pendingRequests.length > 0 && rounds < 5; rounds += 1)
    await drain(session.respond(session.pendingRequests[0]!.id, { approved: true }));
}

/** Sends turn `order`, approving its refund when it pauses on one. */
async function turn(session: Awaited<ReturnType<ReturnType<typeof deskOn>['desk']['session']>>, order: number) {
  await drain(session.send(userText(order)));
  await approveAll(session);
}

/** A model input as the model sees it, ids replaced by their order of appearance (new messages get new ids). */
function shapeOf(messages: readonly ModelMessage[]) {
  const ids = new Map<string, number>();
  const idOf = (id: string | undefined) => {
    if (id === undefined) return undefined;
    if (!ids.has(id)) ids.set(id, ids.size);
    return ids.get(id);
  };
  return messages.map(({ id: _id, toolCalls, toolCallId, ...rest }) => ({
    ...rest,
    toolCallId: idOf(toolCallId),
    toolCalls: toolCalls?.map((call) => ({ ...call, id: idOf(call.id) })),
  }));
}

/** The same provider without its bounds: a session opened with it reads the whole history. */
function unbounded(memory: WorkingMemory): ContextProvider {
  return { name: memory.name, prepareModelInput: (m, c) => memory.prepareModelInput(m, c) };
}

/** Whether agents see a stored message (handoff calls and results are left out of their view). */
const seen = (m: Message) =>
  !(m.role === 'tool' && m.toolName?.startsWith('handoff_to_')) &&
  !(m.role === 'assistant' && m.content === '' && m.toolCalls?.every((c) => c.name.startsWith('handoff_to_')));

describe("opening a session by working memory's token budget (FileStore, a new store per open)", () => {
  const tempDir = useTempDirs('budget-open');

  /**
   * Writes `turns` turns, copies the folder, opens one copy with working memory and the other with the
   * same memory unbounded (whole history read), runs `more` turns on both and compares every model input.
   */
  async function openBoth(options: WorkingMemoryOptions, turns: number, more: number[], window?: number, first = 1) {
    const directory = await tempDir();
    const writer = deskOn(directory, new WorkingMemory(options), window, 'writer');
    const chat = await writer.desk.session({ id: 'long-chat' });
    for (let order = first; order < first + turns; order += 1) await turn(chat, order);
    // The last written turn pauses on a refund's approval: the open holds that turn's user message.
    await drain(chat.send(userText((first + turns) * 10 + 9)));
    expect(chat.pendingRequests).toHaveLength(1);
    await writer.files.close();
    const copy = await tempDir();
    await cp(directory, copy, { recursive: true });

    const memory = new WorkingMemory(options);
    const budgeted = deskOn(directory, memory, window);
    budgeted.counted.reset();
    const session = await budgeted.desk.session({ id: 'long-chat' });
    const read = budgeted.counted.read();
    const whole = deskOn(copy, unbounded(new WorkingMemory(options)), window);
    const reference = await whole.desk.session({ id: 'long-chat' });
    const stored = await budgeted.files.readMessages('long-chat', 'main');
    // The reference reads the whole branch (under a window: what the window needs, as before the budget read less).
    if (window === undefined) expect(reference.messages).toHaveLength(stored.length);

    for (const target of [session, reference]) {
      await approveAll(target);
      for (const order of more) await turn(target, order);
    }
    for (const [i, model] of budgeted.models.entries()) {
      const mine = model.requests.map((r) => shapeOf(r.messages));
      expect(mine.length).toBeGreaterThan(0);
      expect(mine).toEqual(whole.models[i]!.requests.map((r) => shapeOf(r.messages)));
    }
    await budgeted.files.close();
    await whole.files.close();
    return { read, stored, memory, session, firstInput: budgeted.models[1]!.requests[0]!.messages };
  }

  /**
   * The read's bound: at least what the model got first (from the oldest stored message it saw on) and
   * under twice, plus 16, what settles every input: the newest messages agents see that cost more
   * than `maxTokens` together and hold a user message (counted back over every stored message).
   */
  function expectReadBound(opened: Awaited<ReturnType<typeof openBoth>>, maxTokens: number) {
    const { read, stored, memory, firstInput } = opened;
    const seqOf = new Map(stored.map((m) => [m.id, m.seq]));
    const oldest = Math.min(
      ...firstInput.flatMap((m) => (m.id !== undefined && seqOf.has(m.id) ? [seqOf.get(m.id)!] : [])),
    );
    const span = stored.length - oldest + 1;
    let fill = 0;
    let tokens = 0;
    let user = false;
    for (const m of [...stored].reverse()) {
      fill += 1;
      if (!seen(m)) continue;
      tokens += memory.counter.countMessage(toModelMessage(m));
      user ||= m.role === 'user';
      if (tokens > maxTokens && user) break;
    }
    console.info(
      `maxTokens ${maxTokens}: the open read ${read} of ${stored.length} messages; span ${span}, fill ${fill}`,
    );
    expect(read).toBeGreaterThanOrEqual(span);
    // Under twice what settles the inputs plus a page of 16 (a tail starting with a tool result also needs its call: + 4).
    expect(read).toBeLessThan(2 * (fill + 4) + 16);
    expect(read).toBeLessThan(stored.length / 2);
  }

  it('reads about what the budget holds, not maxTokens / 3 messages, and every model input equals a whole-history open', async () => {
    const opened = await openBoth({ maxTokens: 600 }, 150, [200, 201, 203, 209, 210, 214]);
    expect(opened.stored.length).toBeGreaterThan(700);
    expectReadBound(opened, 600);
    expect(opened.read).toBeLessThan(600 / 3); // the old bound: maxTokens / 3 messages agents see
  }, 120_000);

  it('a larger budget over many tiny and huge messages, alone and under a historyWindow: the same inputs', async () => {
    const large = await openBoth({ maxTokens: 5000 }, 150, [300, 301, 302, 303, 304, 309]);
    expectReadBound(large, 5000);
    const windowed = await openBoth({ maxTokens: 1500, model: 'gpt-4' }, 120, [400, 403, 405, 409], 40);
    expectReadBound(windowed, 1500);
    // Hundreds of tiny messages: the pages grow with what is held.
    const tiny = await openBoth({ maxTokens: 3000 }, 200, [2300, 2301, 2303, 2309], undefined, 2000);
    expectReadBound(tiny, 3000);
    expect(tiny.read).toBeGreaterThan(200);
  }, 120_000);

  it('reads the whole history when no newest part settles the inputs: a pinned first message, a summary', async () => {
    const pinned = await openBoth({ maxTokens: 400, pinFirstUserMessage: true }, 40, [500, 503]);
    expect(pinned.read).toBe(pinned.stored.length);
    const summarizer = new ScriptedModel(() => ({ text: 'The customer asked about many orders.' }));
    const summarized = await openBoth({ maxTokens: 400, strategy: 'summarize', summarizer }, 40, [600, 603]);
    expect(summarized.read).toBe(summarized.stored.length);
    expect(summarizer.requests.length).toBeGreaterThan(0);
  }, 120_000);
});
