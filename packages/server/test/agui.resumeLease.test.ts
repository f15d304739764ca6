/**
 * An AG-UI run that resumes several interrupts answers them all under one hold of the branch's
 * lease: another process that takes the branch whenever it is free cannot slip a turn in between
 * two answers of the same run.
 */
import { type BaseEvent, EventType, HttpAgent } from '@ag-ui/client';
import { agent, type BranchLease, InMemoryStore, type LeaseAcquisition, type TenantScope, tool } from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { HandoffBuilder } from '@baton/handoff';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { aguiRoutes } from '../src/agui/index.js';
import { type ServedBaton, serveBaton } from '../src/node.js';

/**
 * A store shared with another process, modelled in one: while `compete` is on, the other process
 * takes the branch's lease the moment this one releases it (as a replica with a queued send would),
 * and gives it back once that attempt is recorded.
 */
class SharedStore extends InMemoryStore {
  compete = false;
  readonly taken: string[] = [];
  readonly acquired: string[] = [];

  override async acquireBranchLease(
    sessionId: string,
    branchId: string,
    input: { owner: string; ttlMs: number; expired?: boolean } & TenantScope,
  ): Promise<LeaseAcquisition> {
    const result = await super.acquireBranchLease(sessionId, branchId, input);
    if (result.acquired) this.acquired.push(input.owner);
    return result;
  }

  override async releaseBranchLease(
    sessionId: string,
    branchId: string,
    input: { owner: string; epoch: number } & TenantScope,
  ): Promise<boolean> {
    const released = await super.releaseBranchLease(sessionId, branchId, input);
    const scope: TenantScope = input.tenantId === undefined ? {} : { tenantId: input.tenantId };
    if (this.compete && released) {
      const other = await super.acquireBranchLease(sessionId, branchId, {
        owner: 'other-replica',
        ttlMs: 60_000,
        ...scope,
      });
      if (other.acquired) {
        this.taken.push(`after ${input.owner}`);
        // The other replica's turn: it holds the branch for a moment, then lets go.
        const lease: BranchLease = other.lease;
        setTimeout(() => {
          void super.releaseBranchLease(sessionId, branchId, { owner: 'other-replica', epoch: lease.epoch, ...scope });
        }, 200);
      }
    }
    return released;
  }
}

let server: ServedBaton | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A billing agent that refunds two orders at once: two tool calls, each needing approval. */
function twoRefundDesk(store: InMemoryStore) {
  const refunds: string[] = [];
  const refund = tool({
    name: 'refund',
    description: 'Refunds an order.',
    parameters: z.object({ orderId: z.string() }),
    needsApproval: true,
    execute: ({ orderId }) => {
      refunds.push(orderId);
      return `Refunded order ${orderId}.`;
    },
  });
  const billing = agent({
    name: 'billing',
    description: 'Refunds.',
    instructions: 'Refund.',
    tools: [refund],
    model: new ScriptedModel((request) => {
      const results = request.messages.filter((m) => m.role === 'tool' && m.toolName === 'refund');
      if (results.length === 2) return { text: `Done: ${results.map((m) => m.content).join(' ')}` };
      return {
        text: 'Refunding both orders.',
        toolCalls: [
          { name: 'refund', arguments: { orderId: '1001' } },
          { name: 'refund', arguments: { orderId: '1002' } },
        ],
      };
    }),
  });
  const workflow = new HandoffBuilder({ name: 'desk' }).participants(billing).coordinator(billing).store(store).build();
  return { workflow, refunds };
}

async function run(agent: HttpAgent, parameters: Parameters<HttpAgent['runAgent']>[0] = {}) {
  const events: BaseEvent[] = [];
  let failure: unknown;
  try {
    await agent.runAgent(parameters, { onEvent: ({ event }) => void events.push(event) });
  } catch (error) {
    failure = error;
  }
  return { events, failure };
}

describe('an AG-UI run resuming several interrupts', () => {
  it('answers every resume entry under one lease: no other process takes the branch between two answers', async () => {
    const store = new SharedStore();
    const { workflow, refunds } = twoRefundDesk(store);
    const app = new Hono();
    app.route('/ag-ui', aguiRoutes({ workflow }));
    server = await serveBaton(app);
    const agent = new HttpAgent({ url: `${server.url}/ag-ui`, threadId: 'two-refunds' });
    agent.messages = [{ id: 'u1', role: 'user', content: 'Refund orders 1001 and 1002.' }];

    const first = await run(agent, { runId: 'r-1' });
    expect(first.failure).toBeUndefined();
    const finished = first.events.find((e) => e.type === EventType.RUN_FINISHED) as
      | (BaseEvent & { outcome?: { type: string; interrupts?: { id: string }[] } })
      | undefined;
    const interrupts = finished?.outcome?.interrupts ?? [];
    expect(interrupts).toHaveLength(2);

    store.compete = true;
    store.acquired.length = 0;
    const second = await run(agent, {
      runId: 'r-2',
      resume: interrupts.map((interrupt) => ({
        interruptId: interrupt.id,
        status: 'resolved' as const,
        payload: { approved: true },
      })),
    });
    store.compete = false;

    expect(second.failure).toBeUndefined();
    expect(second.events.map((e) => e.type)).not.toContain(EventType.RUN_ERROR);
    expect(second.events.at(-1)?.type).toBe(EventType.RUN_FINISHED);
    expect(refunds).toEqual(['1001', '1002']);
    // This run took the lease once; the other process got the branch only after the run let go.
    expect(store.acquired.filter((owner) => owner !== 'other-replica')).toHaveLength(1);
    expect(store.taken).toHaveLength(1);
    const messages = await store.readMessages('two-refunds', 'main');
    expect(messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
      'Refunded order 1001.',
      'Refunded order 1002.',
    ]);
    expect(messages.at(-1)?.content).toBe('Done: Refunded order 1001. Refunded order 1002.');
  });
});
