/**
 * A server replica of the `--replicas` campaign: the chaos desk served by `createBatonApp` (with the
 * reconciler) on the trial's store, on 127.0.0.1. Its store calls that write, its tools and its model
 * calls pass kill points (`killAt` of its orders); reads and lease renewals do not (a follower's polling would
 * make the count depend on timing). Prints `READY <url>` once it serves.
 * Run as `node --import tsx --conditions=source test/chaos/replicaServerChild.ts` with `CHAOS_TRIAL`,
 * `CHAOS_LEASE_MS` and `CHAOS_RECONCILE_MS` set. It loads its modules, then waits as a standby for
 * its orders, one JSON line on stdin (`ReplicaOrders`): a killed replica's place is taken in
 * milliseconds, not in the seconds a cold start takes.
 */
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { createBatonApp } from '@baton/server';
import { serveBaton } from '@baton/server/node';
import { openChildDesk } from './openChildDesk.js';

/** What a standby replica is told when it takes a slot. */
export interface ReplicaOrders {
  /** The kill point it dies at (0: none). */
  killAt: number;
  /** Its number among the trial's replica processes, for the side log. */
  child: number;
  /** The slot's port (0: any). */
  port: number;
  /** Where it appends the label of each kill point (the uninterrupted runs). */
  labelsFile?: string;
}

const lines = createInterface({ input: process.stdin });
const [line] = (await once(lines, 'line')) as [string];
lines.close();
const { killAt, child, port, labelsFile } = JSON.parse(line) as ReplicaOrders;
// Reads and lease renewals pass no kill point: a follower's polling would make the count depend on timing.
const readsOnly = (method: string) => /^(get|read|list|load|find)/.test(method) || method === 'renewBranchLease';
const { workflow } = await openChildDesk({ killAt, child, labelsFile, uncounted: readsOnly });
const app = createBatonApp({
  workflow,
  events: { leaseTtlMs: Number(process.env.CHAOS_LEASE_MS ?? 1_000), pollMs: 25 },
  reconcile: { intervalMs: Number(process.env.CHAOS_RECONCILE_MS ?? 250) },
});
const served = await serveBaton(app, { port });
process.stdout.write(`READY ${served.url}\n`);
