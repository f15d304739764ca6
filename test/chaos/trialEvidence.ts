/**
 * What a trial leaves for the oracle, read after its processes are gone: the stored history and
 * session (by a new store object, as a fresh process would read them), the side log, the kill point
 * labels; and the oracle's verdict on them.
 */
import { readFile } from 'node:fs/promises';
import type { Message } from '@baton/core';
import { judgeTrial, type TranscriptEntry, transcriptOf, type Violation } from './oracle.js';
import { readSideLog } from './sideLog.js';
import { openTrialStore, type TrialConfig } from './trialConfig.js';

/** The oracle's verdict on a trial's store and side log. */
export interface StoreVerdict {
  violations: Violation[];
  /** The stored conversation (empty when the store could not be read). */
  transcript: TranscriptEntry[];
  /** The stored messages of `main` (undefined when the store could not be read). */
  messages: Message[] | undefined;
}

/**
 * Reads the trial's store and side log and judges them against `reference` (the trial is its own
 * reference without one). A store that cannot be read is a `store-unreadable` violation.
 * @param attempts reads tried, 1 s apart, before the store counts as unreadable (another trial may be
 *   restarting the shared FerretDB)
 * @example
 * ```ts
 * const { violations, transcript } = await judgeStore(trial, reference);
 * ```
 */
export async function judgeStore(
  trial: TrialConfig,
  reference: readonly TranscriptEntry[] | undefined,
  attempts = 1,
): Promise<StoreVerdict> {
  let evidence = await readEvidence(trial);
  for (let attempt = 1; attempt < attempts && 'error' in evidence; attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    evidence = await readEvidence(trial);
  }
  if ('error' in evidence)
    return {
      violations: [{ invariant: 'store-unreadable', detail: evidence.error }],
      transcript: [],
      messages: undefined,
    };
  const transcript = transcriptOf(evidence.messages);
  return { violations: judgeTrial(evidence, reference ?? transcript), transcript, messages: evidence.messages };
}

/**
 * The side log's retries by code (`CONCURRENCY`, `HTTP_409`, …), of every process of the trial, killed ones included.
 * @example
 * ```ts
 * const retries = Object.values(retriesByCode(trial.sideLog)).reduce((a, b) => a + b, 0);
 * ```
 */
export function retriesByCode(sideLogPath: string): Record<string, number> {
  const codes: Record<string, number> = {};
  for (const record of readSideLog(sideLogPath))
    if (record.t === 'retry') codes[record.code] = (codes[record.code] ?? 0) + 1;
  return codes;
}

/**
 * The kill point labels a process appended to `path` (none when it wrote no file).
 * @example
 * ```ts
 * const labels = await readLabels(join(dir, 'labels.txt'));
 * ```
 */
export async function readLabels(path: string): Promise<string[]> {
  return (await readFile(path, 'utf8').catch(() => '')).split('\n').filter(Boolean);
}

/** The stored history and session, read by a new store object, with the side log. */
async function readEvidence(trial: TrialConfig) {
  try {
    const reader = await openTrialStore(trial.store);
    try {
      return {
        messages: await reader.readMessages(trial.sessionId, 'main'),
        session: await reader.getSession(trial.sessionId),
        sideLog: readSideLog(trial.sideLog),
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
