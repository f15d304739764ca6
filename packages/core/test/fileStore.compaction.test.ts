/**
 * How big a session log grows against its messages' own JSON, on a support-desk-like session
 * written as the handoff runtime writes it with `'step'` checkpoints: per turn a user message, an
 * assistant tool call, its result and an answer, each stored with a checkpoint (`writeBatch`), the
 * session changed and old checkpoints pruned at the turn's end (`'latest'`). Before format 3, logs
 * under 1 MiB were never compacted (about 2.8 times the messages' JSON); now the log stays within
 * 1.5 times once past 32 KiB (below, the live checkpoints of a turn weigh as much as the messages),
 * and compacting stays amortised (a few compactions per doubling).
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { type Checkpoint, FileStore, type Message } from '../src/index.js';
import { logFileOf } from './support/sessionLogFile.js';
import { makeCheckpoint, makeMessage } from './support/storeFixtures.js';
import { useTempDirs } from './support/tempDirs.js';

const tempDir = useTempDirs('filecompaction');
const ID = 'desk';
const TURNS = 60;

const words = (n: number, seed: number) =>
  Array.from(
    { length: n },
    (_, i) =>
      ['order', 'refund', 'account', 'shipping', 'card', 'please', 'thanks', 'the', 'my', 'was'][
        (seed * 7 + i * 3) % 10
      ],
  ).join(' ');

/** The four messages of turn `turn` (seqs from `seq`), shaped like the support desk's. */
function turnMessages(turn: number, seq: number): Message[] {
  const call = `call-${turn}`;
  return [
    makeMessage(seq, { role: 'user', content: words(24, turn) }),
    makeMessage(seq + 1, {
      role: 'assistant',
      agent: 'billing',
      content: '',
      toolCalls: [
        {
          id: call,
          name: 'look_up_order',
          arguments: JSON.stringify({ orderId: `A-${1000 + turn}`, customer: 'u-7' }),
        },
      ],
    }),
    makeMessage(seq + 2, {
      role: 'tool',
      agent: 'billing',
      toolCallId: call,
      toolName: 'look_up_order',
      content: JSON.stringify({ status: 'shipped', total: 42.5, items: [words(6, turn + 1), words(5, turn + 2)] }),
      durationMs: 12,
    }),
    makeMessage(seq + 3, { role: 'assistant', agent: 'billing', content: words(40, turn + 3) }),
  ];
}

function stepCheckpoint(step: number, throughSeq: number, parentId: string | null): Checkpoint {
  return makeCheckpoint(ID, {
    step,
    throughSeq,
    parentId,
    machine: {
      status: 'active',
      value: 'running',
      context: {
        activeAgent: 'billing',
        turn: step,
        handoffsThisTurn: 1,
        lastHandoff: { from: 'triage', to: 'billing', reason: 'a refund question' },
      },
    },
    statePatches: { session: [{ op: 'replace', path: ['notes'], value: words(12, step) }], branch: [] },
  });
}

describe('FileStore compaction', () => {
  it('keeps a step-checkpointed session log within 1.5 times its messages JSON past 32 KiB, compacting a few times per doubling', async () => {
    const directory = await tempDir();
    const store = new FileStore({ directory });
    let version = (await store.createSession({ id: ID, userId: 'u-7' })).version;
    const file = logFileOf(directory, ID);
    const written: Message[] = [];
    let parent: string | null = null;
    let step = 0;
    let worst = 0;
    let compactions = 0;
    // A compaction writes a new log, under a new log id in its header.
    const logId = async () => JSON.parse((await readFile(file, 'utf8')).split('\n', 1)[0]!).log as string;
    let id = await logId();
    for (let turn = 1; turn <= TURNS; turn += 1) {
      const messages = turnMessages(turn, written.length + 1);
      for (const [index, message] of messages.entries()) {
        step += 1;
        const checkpoint = stepCheckpoint(step, message.seq, parent);
        parent = checkpoint.id;
        const last = index === messages.length - 1;
        const result = await store.writeBatch({
          sessionId: ID,
          branchId: 'main',
          messages: [message],
          checkpoint,
          ...(last
            ? {
                session: {
                  change: { lastActivityAt: new Date().toISOString(), state: { turn } },
                  expectedVersion: version,
                },
              }
            : {}),
        });
        if (result.session !== undefined) version = result.session.version;
        if (last) await store.pruneCheckpoints(ID, 'main', { last: 1 }); // 'latest', at the turn's end
        written.push(message);
      }
      const logBytes = (await stat(file)).size;
      const jsonBytes = Buffer.byteLength(JSON.stringify(written));
      const now = await logId();
      if (now !== id) compactions += 1;
      id = now;
      if (logBytes > 32 * 1024) worst = Math.max(worst, logBytes / jsonBytes);
    }
    const logBytes = (await stat(file)).size;
    const jsonBytes = Buffer.byteLength(JSON.stringify(written));
    console.log(
      `FileStore log after ${TURNS} step-checkpointed turns (${written.length} messages): ${logBytes} bytes, ${(logBytes / written.length).toFixed(0)} per message; ` +
        `messages JSON ${(jsonBytes / written.length).toFixed(0)} per message; ratio ${(logBytes / jsonBytes).toFixed(2)} now, ${worst.toFixed(2)} at worst past 32 KiB; ${compactions} compactions`,
    );
    expect(worst).toBeLessThanOrEqual(1.5);
    expect(compactions).toBeGreaterThan(0);
    expect(compactions).toBeLessThan(TURNS / 2); // amortised: not one per turn
    // Everything live reads back the same from a new store.
    const reader = new FileStore({ directory });
    expect(await reader.readMessages(ID, 'main')).toEqual(written);
    expect((await reader.loadCheckpoint(ID, 'main'))?.id).toBe(parent);
    expect((await readdir(`${directory}/sessions/${ID}`)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  }, 120_000);
});
