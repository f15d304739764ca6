/**
 * The count `bench:scale` prints for a steady-state turn of a stateless worker (steadyStateTurns.ts),
 * on the run's FerretDB (or MONGODB_URL), pinned so that a change adding a round trip fails here.
 */
import { MongoClient } from 'mongodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { mongoTestUrl } from '../../support/mongoTestUrl.js';
import { formatSteadyState, steadyStateRoundTrips } from './steadyStateTurns.js';

describe('steadyStateRoundTrips', () => {
  let ferretDb = false;

  beforeAll(async () => {
    const client = new MongoClient(mongoTestUrl(), { serverSelectionTimeoutMS: 5_000 });
    try {
      const info = await client.db('admin').command({ buildInfo: 1 });
      ferretDb = 'ferretdb' in info || 'ferretdbVersion' in info;
    } finally {
      await client.close();
    }
  });

  it('counts each turn after the first by command: the open reads four documents, the turn writes three (four on FerretDB)', async () => {
    const count = await steadyStateRoundTrips(mongoTestUrl(), { sessions: 1, turnsPerSession: 11 });
    console.log(`steady-state turn (${ferretDb ? 'FerretDB' : 'MongoDB'}): ${formatSteadyState(count)}`);
    expect(count.turns).toBe(10);
    const every = ferretDb ? 8 : 7;
    expect(count.min).toBe(every);
    // Turn 5 also reads the checkpoint manifest for its prune (nothing is old enough yet); turn 10
    // reads it and deletes the old checkpoints with one delete (none has pending writes).
    expect(count.max).toBe(every + 2);
    expect(count.perTurn).toBeCloseTo(every + 0.3, 5);
    const expected: Record<string, number> = {
      'find baton_sessions': 1,
      'find baton_branches': 1,
      'find baton_checkpoints': 1.2,
      'find baton_messages': 1,
      'insert baton_messages': 1,
      'insert baton_checkpoints': 1,
      'findAndModify baton_sessions': 1,
      'delete baton_checkpoints': 0.1,
    };
    if (ferretDb) expected['insert baton_versionClaims'] = 1;
    expect(count.byCommand).toEqual(expected);
  });
});
