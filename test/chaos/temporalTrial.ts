/**
 * One trial of the Temporal campaign: 1–3 worker processes (`temporalWorkerChild.ts`) serve the
 * chaos desk on the trial's MongoStore; the customer (this process) drives the conversation through
 * `@baton/temporal`'s client, each call an Update it awaits. Each worker process takes the next kill
 * point of the plan and SIGKILLs itself there; a dead worker is replaced by a new process at once
 * (its turn is moved to a live worker by Temporal's activity retry). Optionally the Temporal server
 * is SIGKILLed and restarted during the conversation. Then the oracle judges the store and side log.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BatonError, requestKey } from '@baton/core';
import { type CommittedTurn, TemporalSessions } from '@baton/temporal';
import { Client, Connection } from '@temporalio/client';
import { MongoClient } from 'mongodb';
import { ANSWERS, USER_MESSAGES } from './conversationScript.js';
import type { FerretServer } from './ferretServer.js';
import { judgeTrial, type TranscriptEntry, transcriptOf, type Violation } from './oracle.js';
import type { TrialPlan, TrialResult } from './runTrial.js';
import { readSideLog, SideLog } from './sideLog.js';
import type { TemporalDevServer } from './temporalDevServer.js';
import { openTrialStore, type TrialConfig, type TrialStore } from './trialConfig.js';

const WORKER = fileURLToPath(new URL('./temporalWorkerChild.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** A trial still running after this is stopped and reported as `child-error`. */
const TRIAL_TIMEOUT_MS = 240_000;

/** A Temporal trial: the process campaign's plan (kills: one per worker process, in start order) plus the pool. */
export interface TemporalTrialPlan extends TrialPlan {
  /** Worker processes serving at once. */
  workers: number;
  /** SIGKILL and restart the Temporal server this long after the conversation starts. */
  temporalBounce?: { afterMs: number };
}

/** What Temporal trials share: a work folder, the campaign's FerretDB and Temporal server, the workflow bundle. */
export interface TemporalTrialEnvironment {
  workDir: string;
  ferret: FerretServer;
  temporal: TemporalDevServer;
  /** The session workflow's code, bundled once (`bundleBatonWorkflows()`). */
  bundlePath: string;
  signal?: AbortSignal | undefined;
}

/**
 * Runs a Temporal trial to its end and judges it with the campaign's oracle.
 * @param reference the uninterrupted run's transcript; without one the trial is its own reference
 * @example
 * ```ts
 * const result = await runTemporalTrial({ ...plan, workers: 2 }, env, reference);
 * ```
 */
export async function runTemporalTrial(
  plan: TemporalTrialPlan,
  env: TemporalTrialEnvironment,
  reference?: readonly TranscriptEntry[],
): Promise<TrialResult> {
  const name = `t-${randomBytes(5).toString('hex')}`;
  const dir = join(env.workDir, name);
  await mkdir(dir, { recursive: true });
  const store: Extract<TrialStore, { kind: 'mongo' }> = {
    kind: 'mongo',
    url: env.ferret.url,
    dbName: `chaos_${name.replace('-', '_')}`,
  };
  const trial: TrialConfig = {
    store,
    every: plan.every,
    keep: plan.keep,
    sessionId: `chaos-${name}`,
    sideLog: join(dir, 'side.jsonl'),
  };
  // Each trial its own session (so its own workflow id) on the campaign's one Temporal server.
  if (plan.labels) trial.labelsFile = join(dir, 'labels.txt');
  if (plan.delaySeed !== undefined) trial.delaySeed = plan.delaySeed;
  if (plan.window !== undefined) trial.window = plan.window;
  await env.ferret.whileUp(async () => (await openTrialStore(store)).close());

  const temporal = { address: env.temporal.address, taskQueue: `chaos-${name}`, bundlePath: env.bundlePath };
  const kills = [...plan.kills];
  const workers = new Set<ChildProcess>();
  const errors: string[] = [];
  let crashes = 0;
  let started = 0;
  let stopping = false;
  const startWorker = () => {
    const killAt = kills.shift() ?? 0;
    const index = started;
    const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=source', WORKER], {
      cwd: ROOT,
      env: {
        ...process.env,
        CHAOS_TRIAL: JSON.stringify(trial),
        CHAOS_TEMPORAL: JSON.stringify(temporal),
        CHAOS_KILL_AT: String(killAt),
        CHAOS_CHILD: String(index),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    started += 1;
    workers.add(child);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-3000);
    });
    child.once('exit', (code, signal) => {
      workers.delete(child);
      if (stopping) return;
      if (signal === 'SIGKILL' && killAt > 0) crashes += 1;
      else
        errors.push(
          `worker ${index} (kill point ${killAt}) exited with ${code ?? signal}: ${stderr.trim().slice(-1500)}`,
        );
      startWorker(); // the pool keeps its size: a new process takes the dead one's place
    });
  };
  for (let i = 0; i < plan.workers; i += 1) startWorker();

  const violations: Violation[] = [];
  const sideLog = new SideLog(trial.sideLog);
  const connection = await Connection.connect({ address: env.temporal.address });
  let retries = 0;
  const began = Date.now();
  const bounce = plan.temporalBounce ? delayed(plan.temporalBounce.afterMs, () => env.temporal.bounce()) : undefined;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the conversation did not end within ${TRIAL_TIMEOUT_MS} ms`)),
      TRIAL_TIMEOUT_MS,
    );
  });
  const converse = async () => {
    const sessions = new TemporalSessions({
      client: new Client({ connection }),
      taskQueue: temporal.taskQueue,
      turn: { heartbeatTimeoutMs: 2_000 },
    });
    const chat = sessions.session({ sessionId: trial.sessionId, userId: 'customer-1' });
    const deadline = began + TRIAL_TIMEOUT_MS;
    // A call cut by a Temporal restart is repeated with the same Update id: Temporal answers it once.
    const call = async (work: () => Promise<CommittedTurn | undefined>): Promise<CommittedTurn | undefined> => {
      for (;;) {
        env.signal?.throwIfAborted();
        try {
          return await work();
        } catch (error) {
          if (error instanceof BatonError || Date.now() > deadline) throw error;
          retries += 1;
          sideLog.append({
            t: 'retry',
            code: error instanceof Error ? error.name : 'UNKNOWN',
            message: String(error).slice(0, 200),
          });
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
      }
    };
    const acknowledge = (turn: CommittedTurn | undefined) => {
      if (turn === undefined) return [];
      sideLog.append({
        t: 'ack',
        messages: turn.messages.map((m) => ({ id: m.id, seq: m.seq })),
        requests: turn.pendingRequests.map((r) => ({ id: r.id, toolCallId: requestKey(r) })),
      });
      return turn.pendingRequests;
    };
    for (const [index, text] of USER_MESSAGES.entries()) {
      let pending = acknowledge(await call(() => chat.send(text, { updateId: `send-${index}` })));
      for (let request = pending[0]; request !== undefined; request = pending[0]) {
        const answerTo = request;
        sideLog.append({ t: 'answer', requestId: answerTo.id, toolCallId: requestKey(answerTo) });
        const answer =
          answerTo.type === 'tool_approval'
            ? { approved: true as const }
            : (ANSWERS[answerTo.prompt] ?? `no scripted answer to ${answerTo.prompt}`);
        pending = acknowledge(
          await call(() => chat.respond(answerTo.id, answer, { updateId: `respond-${answerTo.id}` })),
        );
      }
    }
    await call(async () => {
      await chat.close({ reason: 'resolved', updateId: 'close' });
      return undefined;
    });
  };
  try {
    await Promise.race([converse(), timedOut]);
  } catch (error) {
    violations.push({
      invariant: 'child-error',
      detail: `the customer failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
    });
  } finally {
    clearTimeout(timer);
    stopping = true;
    await bounce?.catch((error: unknown) =>
      violations.push({ invariant: 'child-error', detail: `the Temporal restart failed: ${String(error)}` }),
    );
    const exits = [...workers].map((w) => new Promise((resolve) => w.once('exit', resolve)));
    for (const w of workers) w.kill('SIGKILL');
    await Promise.all(exits);
    await connection.close();
    sideLog.close();
  }
  const lastChildMs = Date.now() - began;
  for (const error of errors) violations.push({ invariant: 'child-error', detail: error });

  const evidence = await readEvidence(store, trial.sessionId, trial.sideLog);
  let transcript: TranscriptEntry[] = [];
  if ('error' in evidence) violations.push({ invariant: 'store-unreadable', detail: evidence.error });
  else {
    transcript = transcriptOf(evidence.messages);
    violations.push(...judgeTrial(evidence, reference ?? transcript));
  }
  const labelLines = plan.labels
    ? (await readFile(join(dir, 'labels.txt'), 'utf8').catch(() => '')).split('\n').filter(Boolean)
    : [];
  const result: TrialResult = {
    plan,
    violations,
    crashes,
    retries,
    points: labelLines.length,
    lastChildMs,
    labels: labelLines,
    transcript,
  };
  if (violations.length > 0) {
    await writeFile(join(dir, 'plan.json'), JSON.stringify({ plan, violations }, null, 2));
    return { ...result, keptAt: `${dir} and database ${store.dbName}` };
  }
  await rm(dir, { recursive: true, force: true });
  await dropDatabase(store).catch(() => dropDatabase(store).catch(() => {}));
  return result;
}

async function delayed(ms: number, action: () => Promise<void>): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
  await action();
}

/** The stored history and session, read by a new store object, with the side log. */
async function readEvidence(store: TrialStore, sessionId: string, sideLogPath: string) {
  try {
    const reader = await openTrialStore(store);
    try {
      return {
        messages: await reader.readMessages(sessionId, 'main'),
        session: await reader.getSession(sessionId),
        sideLog: readSideLog(sideLogPath),
      };
    } finally {
      await reader.close();
    }
  } catch (error) {
    return {
      error: `the store cannot be read: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
    };
  }
}

async function dropDatabase(store: Extract<TrialStore, { kind: 'mongo' }>): Promise<void> {
  const client = new MongoClient(store.url, { serverSelectionTimeoutMS: 15_000 });
  try {
    await client.db(store.dbName).dropDatabase();
  } finally {
    await client.close();
  }
}
