/**
 * Reads a session folder of `FileStore` format version 1 (the layout before the session log:
 * `session.json`, `branches/<id>.json`, `messages/<id>.jsonl`, `checkpoints/<branch>/<order>-<id>.json`
 * with `.pending.jsonl` beside) into a {@link SessionImage}, as strictly as version 1 read it. A
 * checkpoint file that is not JSON is carried as its text, so it stays damaged (it throws
 * `CheckpointCorruptError` when loaded and blocks no other checkpoint), as it did in version 1.
 */
import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Branch } from '../../../conversation/session.js';
import { freezeMessages } from '../../cloneData.js';
import type { FileDocuments } from '../fileDocuments.js';
import { fsyncDir, hasErrorCode, readTextIfPresent } from '../fileIo.js';
import { type BranchImage, type CheckpointRecord, checkpointRecord, type SessionImage } from '../log/sessionImage.js';
import { listCheckpointFiles } from './checkpointFiles.js';
import { readJsonLines } from './jsonLines.js';

/**
 * The session stored in version 1 layout under `docs.layout.sessionDir(sessionId)`.
 * @returns `undefined` when the folder holds no `session.json`
 * @throws {DocumentCorruptError} (a `StoreError`) when a session, branch or message document is damaged
 */
export async function readV1Session(docs: FileDocuments, sessionId: string): Promise<SessionImage | undefined> {
  const session = await docs.readSession(sessionId);
  if (session === undefined) return undefined;
  const branches = new Map<string, BranchImage>();
  for (const branch of await docs.listBranches(sessionId)) {
    const messages = await docs.readOwnMessages(sessionId, branch.id);
    const runs =
      messages.length === 0
        ? []
        : [{ firstSeq: messages[0]!.seq, count: messages.length, at: undefined, messages: freezeMessages(messages) }];
    branches.set(branch.id, { branch, runs, checkpoints: await readV1Checkpoints(docs, sessionId, branch) });
  }
  return { session, branches };
}

async function readV1Checkpoints(docs: FileDocuments, sessionId: string, branch: Branch): Promise<CheckpointRecord[]> {
  const records: CheckpointRecord[] = [];
  for (const entry of await listCheckpointFiles(docs.layout.checkpointsDir(sessionId, branch.id))) {
    const text = await readTextIfPresent(entry.file);
    if (text === undefined) continue;
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch {
      document = text; // damaged: stays damaged
    }
    const savedAt = await stat(entry.file).then(
      (s) => s.mtime.toISOString(),
      () => new Date().toISOString(),
    );
    const record = checkpointRecord(sessionId, branch.id, entry.id, document, savedAt);
    try {
      record.writes = (await readJsonLines(entry.pendingFile, (value) => value)).records;
    } catch {
      record.writes = [{ damaged: `the pending writes of ${entry.file} could not be read` }]; // fails the schema when loaded
    }
    records.push(record);
  }
  return records;
}

/**
 * Removes the version 1 documents of a session folder once its log is durable (a crash part way
 * leaves files the log makes irrelevant; the next migration of a session removes them too).
 */
export async function removeV1Files(docs: FileDocuments, sessionId: string): Promise<void> {
  const dir = docs.layout.sessionDir(sessionId);
  for (const name of ['branches', 'messages', 'checkpoints'])
    await rm(join(dir, name), { recursive: true, force: true });
  try {
    await rm(docs.layout.sessionFile(sessionId));
  } catch (error) {
    if (!hasErrorCode(error, 'ENOENT')) throw error;
  }
  await fsyncDir(dir);
}
