/**
 * The logger option (issue 13) with a real pino logger writing JSON lines to a stream: what an
 * operator needs is logged (recoveries, lost races, pruning, slow store calls, refused handoffs,
 * failed turns), message contents never are, and without the option nothing is.
 */
import { Writable } from 'node:stream';
import { InMemoryStore } from '@baton/core';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { collect } from './support/helpers.js';
import { lookUpDesk } from './support/scenarioDesks.js';

/** A pino logger at `debug` whose JSON lines are kept in `records`. */
function recordingPino() {
  const records: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n'))
        if (line !== '') records.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), records };
}

const SECRET = 'my card number is 4111 1111 1111 1111';

/** scenarioDesks' look-up desk with the logger, `slowStoreMs` and checkpoint retention `{ last: keepLast }`. */
function desk(store: InMemoryStore, logger?: pino.Logger, options: { slowStoreMs?: number; keepLast?: number } = {}) {
  return lookUpDesk(store, (builder) => {
    builder.checkpoints({ keep: { last: options.keepLast ?? 5 } });
    return logger === undefined
      ? builder
      : builder.logger(logger, options.slowStoreMs === undefined ? {} : { slowStoreMs: options.slowStoreMs });
  });
}

const messages = (records: readonly Record<string, unknown>[]) => records.map((r) => r.msg);

describe('logger option', () => {
  it('logs the recovery of a turn the caller stopped reading, and never a message content', async () => {
    const { logger, records } = recordingPino();
    const session = await desk(new InMemoryStore(), logger).session({ id: 'log-1' });
    for await (const event of session.send(SECRET)) if (event.type === 'tool.call') break;
    await collect(session.send('and then?'));
    const loaded = records.find((r) => r.msg === 'loaded a session with work left over');
    expect(loaded).toMatchObject({ level: 30, sessionId: 'log-1', branchId: 'main', unfinishedTurn: true });
    expect(records.find((r) => r.msg === 'resuming an interrupted turn')).toMatchObject({
      level: 30,
      sessionId: 'log-1',
    });
    expect(JSON.stringify(records)).not.toContain('4111');
  });

  it('logs the loser of a race between two processes at warn, with the failed turn', async () => {
    const { logger, records } = recordingPino();
    const store = new InMemoryStore();
    const first = await desk(store, logger).session({ id: 'log-2' });
    const second = await desk(store, logger).session({ id: 'log-2' });
    const outcomes = await Promise.allSettled([collect(first.send('first')), collect(second.send('second'))]);
    expect(outcomes.filter((o) => o.status === 'rejected')).toHaveLength(1);
    expect(records.filter((r) => r.msg === 'store write lost a race')).toEqual([
      expect.objectContaining({ level: 40, sessionId: 'log-2', code: 'CONCURRENCY' }),
    ]);
    expect(records.filter((r) => r.msg === 'turn failed')).toEqual([
      expect.objectContaining({ level: 40, sessionId: 'log-2', code: 'CONCURRENCY' }),
    ]);
  });

  it('logs pruning, slow store calls and refused handoffs', async () => {
    const { logger, records } = recordingPino();
    const session = await desk(new InMemoryStore(), logger, { slowStoreMs: 0, keepLast: 1 }).session({ id: 'log-3' });
    await collect(session.send('one'));
    await collect(session.send('two'));
    await collect(session.send('transfer me'));
    expect(records).toContainEqual(
      expect.objectContaining({
        level: 30,
        msg: 'store removed documents',
        method: 'writeBatch', // the turn's write, its prune included
        sessionId: 'log-3',
        removed: expect.any(Number),
      }),
    );
    expect(records).toContainEqual(
      expect.objectContaining({
        level: 40,
        msg: 'store call was slow',
        method: 'writeBatch',
        sessionId: 'log-3',
        durationMs: expect.any(Number),
      }),
    );
    expect(records).toContainEqual(expect.objectContaining({ level: 40, code: 'HANDOFF_REFUSED', sessionId: 'log-3' }));
  });

  it('is silent by default and with a logger at a higher level', async () => {
    const { logger, records } = recordingPino();
    logger.level = 'error';
    const session = await desk(new InMemoryStore(), logger, { slowStoreMs: 0, keepLast: 1 }).session({ id: 'log-4' });
    await collect(session.send('one'));
    await collect(session.send('two'));
    expect(messages(records)).toEqual([]);
    const quiet = await desk(new InMemoryStore()).session({ id: 'log-5' });
    await expect(collect(quiet.send('one'))).resolves.toContainEqual(
      expect.objectContaining({ type: 'turn.completed' }),
    );
  });
});
