import { TaskState } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { userMessage } from '@baton/a2a';
import { agent, InMemoryStore, tool } from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { HandoffBuilder } from '@baton/handoff';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { serveA2A } from './support/serveA2A.js';

it('CancelTask on a running task aborts its Baton turn and ends the task canceled', async () => {
  let started!: () => void;
  const toolStarted = new Promise<void>((resolve) => {
    started = resolve;
  });
  // A tool that never finishes by itself: only the cancellation ends the turn.
  const wait = tool({
    name: 'wait_for_warehouse',
    description: 'Waits for the warehouse.',
    parameters: z.object({}),
    execute: () => {
      started();
      return new Promise<string>(() => undefined);
    },
  });
  const model = new ScriptedModel([{ toolCalls: [{ name: 'wait_for_warehouse', arguments: {} }] }, { text: 'unused' }]);
  const clerk = agent({
    name: 'clerk',
    description: 'Asks the warehouse.',
    instructions: 'Ask.',
    model,
    tools: [wait],
  });
  const store = new InMemoryStore();
  const served = await serveA2A(new HandoffBuilder({ name: 'warehouse' }).participants(clerk).store(store).build());
  try {
    const client = await new ClientFactory().createFromUrl(served.url);
    const stream = client.sendMessageStream({
      tenant: '',
      message: userMessage('Where is my parcel?'),
      configuration: undefined,
      metadata: undefined,
    });
    let taskId: string | undefined;
    let contextId: string | undefined;
    const states: TaskState[] = [];
    for await (const event of stream) {
      if (event.payload?.$case === 'task') {
        taskId = event.payload.value.id;
        contextId = event.payload.value.contextId;
        await toolStarted;
        const cancelled = await client.cancelTask({ tenant: '', id: taskId, metadata: undefined });
        expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      }
      if (event.payload?.$case === 'statusUpdate' && event.payload.value.status)
        states.push(event.payload.value.status.state);
    }
    expect(states.at(-1)).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await client.getTask({ tenant: '', id: taskId! })).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    // The waiting tool call got its "Discarded" result: no dangling call in the session.
    const messages = await store.readMessages(`warehouse:${contextId}`, 'main');
    expect(messages.find((m) => m.role === 'tool')?.content).toMatch(/discarded/i);
  } finally {
    await served.close();
  }
});
