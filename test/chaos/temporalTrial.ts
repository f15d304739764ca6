/**
 * One trial of the Temporal campaign: 1–3 worker processes (`temporalWorkerChild.ts`) serve the
 * chaos desk on the trial's MongoStore; the customer (this process) drives the conversation through
 * `@baton/temporal`'s client, each call an Update it awaits. Each worker process takes the next kill
 * point of the plan and SIGKILLs itself there; a dead worker is replaced by a new process at once
 * (its turn is moved to a live worker by Temporal's activity retry). Optionally the Temporal server
 * is SIGKILLed and restarted during the conversation. Then the oracle judges the store and side log.
 */
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { BatonError, requestKey } from '@baton/core';
import { type CommittedTurn, TemporalSessions } from '@baton/temporal';
import { Client, Connection } from '@temporalio/client';
import { ANSWERS, USER_MESSAGES } from './conversationScript.js';
import type { FerretServer } from './ferretServer.js';
import type { TranscriptEntry, Violation } from './oracle.js';
import type { TrialPlan, TrialResult } from './runTrial.js';
import { SideLog } from './sideLog.js';
import { killAll, spawnChaosChild } from './spawnChaosChild.js';
import type { TemporalDevServer } from './temporalDevServer.js';
import { judgeStore, readLabels } from './trialEvidence.js';
import { closeTrialWorkspace, openTrialWorkspace } from './trialWorkspace.js';

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
  // Each trial its own session (so its own workflow id) on the campaign's one Temporal server.
  const workspace = await openTrialWorkspace({ ...plan, store: 'mongo' }, env, {
    sessionIdOf: (name) => `chaos-${name}`,
  });
  const { name, dir, trial } = workspace;
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
    const { process: child, stderr } = spawnChaosChild(
      'temporalWorkerChild.ts',
      {
        CHAOS_TRIAL: JSON.stringify(trial),
        CHAOS_TEMPORAL: JSON.stringify(temporal),
        CHAOS_KILL_AT: String(killAt),
        CHAOS_CHILD: String(index),
      },
      ['ignore', 'ignore', 'pipe'],
    );
    started += 1;
    workers.add(child);
    child.once('exit', (code, signal) => {
      workers.delete(child);
      if (stopping) return;
      if (signal === 'SIGKILL' && killAt > 0) crashes += 1;
      else
        errors.push(
          `worker ${index} (kill point ${killAt}) exited with ${code ?? signal}: ${stderr().trim().slice(-1500)}`,
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
    await killAll(workers);
    await connection.close();
    sideLog.close();
  }
  const lastChildMs = Date.now() - began;
  for (const error of errors) violations.push({ invariant: 'child-error', detail: error });

  const verdict = await judgeStore(trial, reference);
  violations.push(...verdict.violations);
  const labels = plan.labels ? await readLabels(join(dir, 'labels.txt')) : [];
  return closeTrialWorkspace(workspace, {
    plan,
    violations,
    crashes,
    retries,
    points: labels.length,
    lastChildMs,
    labels,
    transcript: verdict.transcript,
  });
}

async function delayed(ms: number, action: () => Promise<void>): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
  await action();
}
