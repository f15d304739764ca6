import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agent, FileStore, type ModelRequest } from '@baton/core';
import { ScriptedModel, type ScriptedResponse } from '@baton/core/testing';
import { HandoffBuilder } from '@baton/handoff';
import { EpisodicMemory, endConversationTool } from '@baton/memory';
import { afterEach, describe, expect, it } from 'vitest';

const WINDOW = 6;
const lastUserText = (request: ModelRequest) => request.messages.findLast((m) => m.role === 'user')?.content ?? '';
const drain = async (events: AsyncIterable<unknown>) => {
  for await (const _ of events) {
    // events are not needed here
  }
};

/** A desk with a 6-message window and episodic memory, as a fresh process builds it on `directory`. */
function windowedDesk(directory: string) {
  const store = new FileStore({ directory });
  const triageModel = new ScriptedModel((request): ScriptedResponse => {
    const text = lastUserText(request);
    if (request.messages.at(-1)?.role !== 'user') return { text: 'Anything else?' };
    if (/bye/.test(text))
      return {
        text: 'Goodbye!',
        toolCalls: [{ name: 'end_conversation', arguments: { reason: 'user said goodbye' } }],
      };
    return { toolCalls: [{ name: 'handoff_to_billing', arguments: { reason: 'refund' } }] };
  });
  const billingModel = new ScriptedModel((request) => ({
    text: `Refunded ${/order (\d+)/.exec(lastUserText(request))?.[1] ?? '?'}.`,
  }));
  const triage = agent({
    name: 'triage',
    description: 'Routes.',
    instructions: 'Route refunds to billing.',
    model: triageModel,
    tools: [endConversationTool],
  });
  const billing = agent({
    name: 'billing',
    description: 'Refunds.',
    instructions: 'Refund orders.',
    model: billingModel,
  });
  const desk = new HandoffBuilder({ name: 'windowed-desk' })
    .participants(triage, billing)
    .coordinator(triage)
    .store(store)
    .memory(new EpisodicMemory())
    .historyWindow({ messages: WINDOW })
    .build();
  return { desk, store, triageModel };
}

describe('historyWindow with episodic memory (FileStore, a fresh process per call)', () => {
  let directory: string | undefined;
  afterEach(async () => {
    if (directory !== undefined) await rm(directory, { recursive: true, force: true });
    directory = undefined;
  });

  it('episodes of windowed sessions keep the whole transcript, closed by the user or by an agent; recalled context reaches the windowed input', async () => {
    directory = await mkdtemp(join(tmpdir(), 'baton-window-memory-'));
    for (let order = 1; order <= 20; order += 1) {
      const { desk, store } = windowedDesk(directory);
      await drain((await desk.session({ id: 'long-chat', userId: 'u-42' })).send(`refund order ${order}`));
      await store.close();
    }
    const closer = windowedDesk(directory);
    const session = await closer.desk.session({ id: 'long-chat', userId: 'u-42' });
    expect(session.messages[0]!.seq).toBeGreaterThan(1);
    await session.close({ reason: 'resolved' });
    const episode = await closer.store.getEpisode('long-chat');
    expect(episode?.transcript.filter((line) => line.role === 'user').map((line) => line.content)).toEqual(
      Array.from({ length: 20 }, (_, i) => `refund order ${i + 1}`),
    );
    expect(episode?.transcript.filter((line) => line.content === 'Refunded 1.')).toHaveLength(1);
    expect(episode?.agents).toEqual(['triage', 'billing']);
    await closer.store.close();

    // An agent's end_conversation after a windowed load: the episode is whole too.
    for (const text of ['refund order 31', 'refund order 32', 'refund order 33', 'refund order 34', 'thanks, bye']) {
      const { desk, store } = windowedDesk(directory);
      await drain((await desk.session({ id: 'ended-chat', userId: 'u-42' })).send(text));
      await store.close();
    }
    const reader = windowedDesk(directory);
    expect((await reader.store.getSession('ended-chat'))?.status).toBe('closed');
    const ended = await reader.store.getEpisode('ended-chat');
    expect(ended).toMatchObject({ closedReason: 'user said goodbye' });
    expect(ended?.transcript.filter((line) => line.role === 'user').map((line) => line.content)).toEqual([
      'refund order 31',
      'refund order 32',
      'refund order 33',
      'refund order 34',
      'thanks, bye',
    ]);

    // A later session of the same user: the recalled episode is in the model input, beside a window of conversation.
    const later = await reader.desk.session({ id: 'later-chat', userId: 'u-42' });
    for (let order = 1; order <= 3; order += 1) await drain(later.send(`what about the refund of order ${order}?`));
    const input = reader.triageModel.requests.at(-1)!.messages;
    expect(
      input
        .filter((m) => m.role === 'context')
        .map((m) => m.content)
        .join('\n'),
    ).toContain('Conversation long-chat');
    expect(input.filter((m) => m.role !== 'system' && m.role !== 'context').length).toBeLessThanOrEqual(WINDOW);
    await reader.store.close();
  });
});
