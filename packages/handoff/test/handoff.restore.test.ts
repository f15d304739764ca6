import { FileStore, InMemoryStore } from '@baton/core';
import { afterEach, describe, expect, it } from 'vitest';
import { HandoffBuilder, isHandoffToolName } from '../src/index.js';
import { collect, danglingToolCalls, lastOf, ofType, scriptedAgent, tempDir } from './support/helpers.js';
import { askingDesk } from './support/scenarioDesks.js';

const CYCLES = 5;

/** A fresh process's view: new FileStore, new agents, new workflow over the same folder. */
function openDesk(directory: string) {
  return askingDesk(new FileStore({ directory }), CYCLES + 1);
}

describe('restore without duplicate context (Done-when 1)', () => {
  let dispose: (() => Promise<void>) | undefined;
  afterEach(async () => dispose?.());

  it('answers a user_input request after restoring in fresh objects, five times in a row, each message sent once', async () => {
    const dir = await tempDir();
    dispose = dir.dispose;
    const first = openDesk(dir.path);
    const session = await first.workflow.session({ id: 'chat-restore', userId: 'u-1' });
    const events = await collect(session.send('I was charged twice for order 1234'));
    const [request] = ofType(events, 'request');
    expect(request?.request).toMatchObject({
      type: 'user_input',
      agent: 'billing',
      prompt: 'Question 1?',
      conversationRef: { branchId: 'main', throughSeq: 4 },
    });
    expect(events.at(-1)?.type).toBe('turn.completed');
    await first.store.close();

    for (let cycle = 1; cycle <= CYCLES + 1; cycle += 1) {
      const fresh = openDesk(dir.path);
      const restored = await fresh.workflow.session({ id: 'chat-restore' });
      expect(restored.pendingRequests).toHaveLength(1);
      const pending = restored.pendingRequests[0]!;
      expect(pending.type === 'user_input' && pending.prompt).toBe(`Question ${cycle}?`);
      // The request points at the conversation; it holds no messages.
      expect(Object.keys(pending).sort()).toEqual([
        'agent',
        'conversationRef',
        'createdAt',
        'id',
        'prompt',
        'toolCallId',
        'type',
      ]);

      const turn = await collect(restored.respond(pending.id, `answer-${cycle}`));
      expect(turn.at(-1)?.type).toBe('turn.completed');

      const sent = fresh.billing.model.requests[0]!.messages;
      const ids = sent.filter((m) => m.role !== 'system').map((m) => m.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(sent.filter((m) => m.content === `answer-${cycle}`)).toHaveLength(1);
      expect(sent.filter((m) => m.content === 'I was charged twice for order 1234')).toHaveLength(1);
      // Exactly the branch's stored history as the specialist sees it (handoff call and result left out), nothing more.
      const stored = await fresh.store.readMessages('chat-restore', 'main');
      const visible = stored.filter(
        (m) =>
          !(m.role === 'tool' && isHandoffToolName(m.toolName)) && !(m.role === 'assistant' && m.agent === 'triage'),
      );
      // (the last stored message is the model's answer to this very request)
      expect(ids).toEqual(visible.slice(0, -1).map((m) => m.id));
      const waiting = cycle <= CYCLES ? [stored.at(-1)!.toolCalls![0]!.id] : [];
      expect(danglingToolCalls(stored)).toEqual(waiting);
      await fresh.store.close();
    }

    const last = openDesk(dir.path);
    const stored = await last.store.readMessages('chat-restore', 'main');
    expect(stored.at(-1)).toMatchObject({ role: 'assistant', agent: 'billing', content: 'All sorted.' });
    expect(danglingToolCalls(stored)).toEqual([]);
    const contents = stored.map((m) => m.content).filter((c) => c.startsWith('answer-'));
    expect(contents).toEqual(Array.from({ length: CYCLES + 1 }, (_, i) => `answer-${i + 1}`));
    const checkpoint = await last.store.loadCheckpoint('chat-restore', 'main');
    expect(JSON.stringify(checkpoint)).not.toContain('I was charged twice');
    await last.store.close();
  });

  it('an answer stored just before a crash is used: the next process resumes the step without asking again', async () => {
    const store = new InMemoryStore();
    const asker = scriptedAgent('asker', (request) =>
      lastOf(request)?.role === 'user'
        ? { toolCalls: [{ id: 'ask', name: 'request_user_input', arguments: { prompt: 'Order?' } }] }
        : { text: `Thanks, ${lastOf(request)?.content}.` },
    );
    const build = () => new HandoffBuilder().participants(asker).store(store).build();
    const session = await build().session({ id: 'crash-answer' });
    await collect(session.send('Where is my parcel?'));
    const checkpoint = (await store.loadCheckpoint('crash-answer', 'main'))!;
    // What respond() stores first, before the process died: the answer as the call's pending write.
    await store.putPendingWrites('crash-answer', 'main', checkpoint.id, [
      {
        toolCallId: 'ask',
        toolName: 'request_user_input',
        agent: 'asker',
        content: 'order 1234',
        isError: false,
        durationMs: 0,
        createdAt: new Date().toISOString(),
      },
    ]);
    const fresh = await build().session({ id: 'crash-answer' });
    expect(fresh.pendingRequests).toEqual([]);
    expect(fresh.routingState).toBe('running');
    const events = await collect(fresh.resume());
    expect(events.at(-1)).toMatchObject({ type: 'turn.completed' });
    const stored = await store.readMessages('crash-answer', 'main');
    expect(stored.map((m) => m.content)).toEqual(['Where is my parcel?', '', 'order 1234', 'Thanks, order 1234.']);
    expect(danglingToolCalls(stored)).toEqual([]);
  });
});
