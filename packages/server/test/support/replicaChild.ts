/**
 * One server replica for the multi-process tests: a desk (triage hands off to billing, who answers
 * with a long streamed text, paced) on a FileStore shared with the other replicas, served on
 * 127.0.0.1. Prints `READY <url>`; `GET /test/model-calls` tells how many model calls it made.
 * Env: REPLICA_STORE_DIR and REPLICA_LOCK_STALE_MS (or REPLICA_MONGO_URL and REPLICA_MONGO_DB for a MongoStore), REPLICA_EVERY (`turn` or, by default, `step`), REPLICA_PACE_MS, REPLICA_LEASE_MS, REPLICA_RECONCILE_MS (unset: no reconciler).
 */
import { agent, type ModelClient, type ModelRequest, type ModelStreamEvent, type Store } from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { HandoffBuilder } from '@baton/handoff';
import { Hono } from 'hono';
import { createBatonApp } from '../../src/index.js';
import { serveBaton } from '../../src/node.js';
import { openReplicaStore } from './replicaStore.js';
import { BILLING_REPLY } from './replicas.js';

let modelCalls = 0;
class CountedModel implements ModelClient {
  readonly model: string;
  constructor(
    readonly inner: ModelClient,
    readonly paceMs: number,
  ) {
    this.model = inner.model;
  }
  async *stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    modelCalls++;
    for await (const event of this.inner.stream(request)) {
      if (this.paceMs > 0) await new Promise((resolve) => setTimeout(resolve, this.paceMs));
      yield event;
    }
  }
}

const paceMs = Number(process.env.REPLICA_PACE_MS ?? 0);
const store: Store = await openReplicaStore(process.env);
const triage = agent({
  name: 'triage',
  description: 'Routes customers.',
  instructions: 'Route.',
  model: new CountedModel(
    new ScriptedModel(() => ({ toolCalls: [{ name: 'handoff_to_billing', arguments: { reason: 'a refund' } }] })),
    0,
  ),
});
const billing = agent({
  name: 'billing',
  description: 'Refunds.',
  instructions: 'Refund.',
  model: new CountedModel(new ScriptedModel(() => ({ text: BILLING_REPLY }), { chunkSize: 4 }), paceMs),
});
const workflow = new HandoffBuilder({ name: 'desk' })
  .participants(triage, billing)
  .coordinator(triage)
  .store(store)
  .checkpoints({ every: process.env.REPLICA_EVERY === 'turn' ? 'turn' : 'step' })
  .build();
const reconcileMs = process.env.REPLICA_RECONCILE_MS;
const baton = createBatonApp({
  workflow,
  events: { leaseTtlMs: Number(process.env.REPLICA_LEASE_MS ?? 15_000), pollMs: 25 },
  ...(reconcileMs === undefined ? {} : { reconcile: { intervalMs: Number(reconcileMs) } }),
});
const app = new Hono();
app.get('/test/model-calls', (c) => c.json({ modelCalls }));
app.route('/', baton);
const served = await serveBaton(app);
process.stdout.write(`READY ${served.url}\n`);
