/** `FileStore`'s checks of a session log: `verify` (read-only) and `repair` (salvage the intact records). */
import { NotFoundError } from '../../../errors.js';
import { assertSessionId } from '../../storeRules.js';
import type { FileSessions } from '../fileSessions.js';
import type { SessionLogRepair, SessionLogReport } from '../log/logRepair.js';
import { lastSeq } from '../log/sessionImage.js';

/** `FileStore.verify`: the log's report, or for a format 1 folder, {@link folderReport}. */
export async function verifySessionLog(sessions: FileSessions, sessionId: string): Promise<SessionLogReport> {
  const id = assertSessionId(sessionId);
  return (await sessions.logs.verify(id)) ?? (await folderReport(sessions, id));
}

/** `FileStore.repair`: under the session's lock; a format 1 folder is left as it is (`repaired: false`). */
export async function repairSessionLog(sessions: FileSessions, sessionId: string): Promise<SessionLogRepair> {
  const id = assertSessionId(sessionId);
  const repaired = await sessions.locks.run(id, () => sessions.logs.repair(id));
  return repaired ?? { ...(await folderReport(sessions, id)), repaired: false };
}

/** The report of a session stored as a format 1 folder (no log yet). */
async function folderReport(sessions: FileSessions, id: string): Promise<SessionLogReport> {
  const image = await sessions.logs.read(id);
  if (image === undefined)
    throw new NotFoundError(`Session ${JSON.stringify(id)} does not exist under ${sessions.layout.root}.`);
  const intactThroughSeq: Record<string, number> = {};
  for (const branch of image.branches.values()) intactThroughSeq[branch.branch.id] = lastSeq(branch);
  return {
    sessionId: id,
    file: sessions.layout.sessionDir(id),
    version: 1,
    ok: true,
    bytes: 0,
    intactRecords: 0,
    intactBytes: 0,
    intactThroughSeq,
    tornBytes: 0,
  };
}
