/** The scenario on Baton: a HandoffBuilder workflow on an InMemoryStore. */
import {
  agent,
  InMemoryStore,
  type ModelClient,
  type ModelMessage,
  type ModelRequest,
  type ModelStreamEvent,
  type Store,
  tool,
} from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { HandoffBuilder, type HandoffSession } from '@baton/handoff';
import { z } from 'zod';
import { answerTo, type PeerRunner, REFUND_TEXT } from './scenario.js';

/** Keeps the newest request's messages (by reference, so recording costs nothing per turn). */
class LastInput implements ModelClient {
  last: readonly ModelMessage[] = [];
  constructor(readonly inner: ModelClient) {}
  get model(): string {
    return this.inner.model;
  }
  stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    this.last = request.messages;
    return this.inner.stream(request);
  }
}

function lastUserText(request: ModelRequest): string {
  return request.messages.findLast((m) => m.role === 'user')?.content ?? '';
}

function desk(store: Store) {
  const refund = tool({
    name: 'refund',
    description: 'Refunds a charge.',
    parameters: z.object({ orderId: z.string() }),
    needsApproval: true,
    execute: async ({ orderId }) => `refunded ${orderId}`,
  });
  const triage = agent({
    name: 'triage',
    description: 'Routes customers to specialists.',
    instructions: 'Route the customer.',
    model: new ScriptedModel(
      (r) =>
        r.messages.at(-1)?.role === 'user'
          ? { toolCalls: [{ name: 'handoff_to_billing', arguments: { reason: 'billing' } }] }
          : { text: 'Anything else?' },
      {
        record: false,
      },
    ),
  });
  const billingModel = new LastInput(
    new ScriptedModel(
      (r) => {
        const last = r.messages.at(-1);
        if (last?.role === 'tool' && last.toolName === 'refund') return { text: 'Refunded.' };
        const text = lastUserText(r);
        return text === REFUND_TEXT
          ? { toolCalls: [{ name: 'refund', arguments: { orderId: '1234' } }] }
          : { text: answerTo(text) };
      },
      { record: false },
    ),
  );
  const billing = agent({
    name: 'billing',
    description: 'Refunds, charges, invoices.',
    instructions: 'Resolve billing questions.',
    tools: [refund],
    model: billingModel,
  });
  const workflow = new HandoffBuilder({ name: 'peers' })
    .participants(triage, billing)
    .coordinator(triage)
    .store(store)
    .build();
  return { workflow, billingModel };
}

async function drain(events: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of events) {
    // drain
  }
}

/** Creates the Baton runner (one session on a fresh InMemoryStore). */
export async function batonRunner(version: string): Promise<PeerRunner> {
  const store = new InMemoryStore();
  let session: HandoffSession = await desk(store).workflow.session({ id: 'peers-1' });
  let afterRestore: readonly ModelMessage[] = [];
  return {
    name: `Baton ${version} (InMemoryStore)`,
    turn: (text) => drain(session.send(text)),
    async persistedBytes() {
      const size = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
      let total = size(await store.getSession('peers-1')) + size(await store.listBranches('peers-1'));
      total += size(await store.readMessages('peers-1', 'main'));
      for (const entry of await store.listCheckpoints('peers-1', 'main'))
        total += size(await store.loadCheckpoint('peers-1', 'main', entry.id));
      return total;
    },
    async pauseOnApproval() {
      await drain(session.send(REFUND_TEXT));
      if (session.pendingRequests.length !== 1) throw new Error('Baton did not pause on the approval');
    },
    async restoreAndApprove() {
      const fresh = desk(store);
      const started = performance.now();
      session = await fresh.workflow.session({ id: 'peers-1' });
      const request = session.pendingRequests[0];
      if (request === undefined) throw new Error('Baton restored no pending approval');
      await drain(session.respond(request.id, { approved: true }));
      afterRestore = fresh.billingModel.last;
      return performance.now() - started;
    },
    inputAfterRestore: () => afterRestore.map((m) => `${m.role}:${m.id ?? m.content}`),
  };
}
