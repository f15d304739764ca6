import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleBatonWorkflows, TemporalSessions } from '@baton/temporal';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { mongoTestUrl } from '../../../test/support/mongoTestUrl.js';
import { harness, storedBranch } from './support/deskHarness.js';
import { startWorkerProcess, type WorkerProcess } from './support/workerProcess.js';

let h: Awaited<ReturnType<typeof harness>>;
let dir: string;
let bundlePath: string;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  h = await harness();
  dir = await mkdtemp(join(tmpdir(), 'baton-temporal-crash-'));
  bundlePath = join(dir, 'workflows.js');
  await writeFile(bundlePath, (await bundleBatonWorkflows()).code);
});

afterAll(async () => {
  for (const worker of workers) await worker.kill();
  await h?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

it('a worker SIGKILLed mid-turn: another worker finishes the turn, the awaited Update gets the result, each message is stored once', async () => {
  const logFile = join(dir, 'tools.log');
  await writeFile(logFile, '');
  const args = (who: string, hang: boolean) => [
    h.address,
    h.taskQueue,
    mongoTestUrl(),
    h.dbName,
    who,
    logFile,
    bundlePath,
    ...(hang ? ['hang'] : []),
  ];
  const first = await startWorkerProcess(args('first', true));
  workers.push(first);
  const sessions = new TemporalSessions({
    client: h.client,
    taskQueue: h.taskQueue,
    turn: { heartbeatTimeoutMs: 2_000 },
  });
  const chat = sessions.session({ sessionId: 'crash-1', userId: 'u-1' });

  const turn = chat.send('Where is order 1234?');
  await first.printed('look_up_order started');
  await first.kill(); // mid-tool: the user message, the handoff and the tool call are stored, the result is not

  const second = await startWorkerProcess(args('second', false));
  workers.push(second);
  const result = await turn; // the same Update, answered with no new client request

  expect(result.message?.content).toBe('Done: order 1234 ships tomorrow');
  expect(result.messages.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  expect(result.turn).toBe(1); // the retry's resume reports the turn's number, as the first attempt would have
  expect(result.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['Where is order 1234?']);
  expect((await readFile(logFile, 'utf8')).trim().split('\n')).toEqual(['look_up_order:second']);
  const stored = await storedBranch(h.store, 'crash-1');
  expect(stored.messages.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  expect(new Set(stored.messages.map((m) => m.id)).size).toBe(6);
  expect(stored.dangling).toEqual([]);
  expect(stored.answeredTwice).toEqual([]);

  // The session goes on on the live worker.
  const next = await chat.send('And order 8?');
  expect(next.messages.map((m) => m.seq)).toEqual([7, 8, 9, 10, 11, 12]);
  expect(next.turn).toBe(2);
});

it('a worker SIGKILLed after the turn was stored, before its activity completed: the retry reads the turn back, the awaited Update gets it, nothing runs or is stored twice', async () => {
  const logFile = join(dir, 'tools-after-commit.log');
  await writeFile(logFile, '');
  const taskQueue = `${h.taskQueue}-after-commit`; // the first test's live worker polls h.taskQueue
  const args = (who: string, mode?: string) => [
    h.address,
    taskQueue,
    mongoTestUrl(),
    h.dbName,
    who,
    logFile,
    bundlePath,
    ...(mode === undefined ? [] : [mode]),
  ];
  const first = await startWorkerProcess(args('first', 'hang-after-commit'));
  workers.push(first);
  const sessions = new TemporalSessions({ client: h.client, taskQueue, turn: { heartbeatTimeoutMs: 2_000 } });
  const chat = sessions.session({ sessionId: 'crash-2', userId: 'u-2' });

  const turn = chat.send('Where is order 77?');
  await first.printed('turn committed');
  // The killed attempt stored the whole turn: the question, the handoff, the tool call and result, the answer.
  const before = await storedBranch(h.store, 'crash-2');
  expect(before.messages.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  expect(before.messages.at(-1)?.content).toBe('Done: order 77 ships tomorrow');
  await first.kill(); // before Temporal heard the activity completed

  const second = await startWorkerProcess(args('second'));
  workers.push(second);
  const result = await turn; // the same Update, answered by the retried activity on the second worker

  expect(result.message?.content).toBe('Done: order 77 ships tomorrow');
  expect(result.completed).toBe(true);
  expect(result.turn).toBe(1); // read back from the store: the reopened session's counter
  expect(result.messages.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  expect(result.messages.map((m) => m.id)).toEqual(before.messages.map((m) => m.id));
  expect((await readFile(logFile, 'utf8')).trim().split('\n')).toEqual(['look_up_order:first']);
  const stored = await storedBranch(h.store, 'crash-2');
  expect(stored.messages.map((m) => m.id)).toEqual(before.messages.map((m) => m.id));
  expect(stored.dangling).toEqual([]);
  expect(stored.answeredTwice).toEqual([]);

  // The workflow's head moved past the read-back turn: the next turn starts at seq 7, on the live worker.
  const next = await chat.send('And order 9?');
  expect(next.messages.map((m) => m.seq)).toEqual([7, 8, 9, 10, 11, 12]);
  expect(next.turn).toBe(2);
  expect((await readFile(logFile, 'utf8')).trim().split('\n')).toEqual(['look_up_order:first', 'look_up_order:second']);
});
