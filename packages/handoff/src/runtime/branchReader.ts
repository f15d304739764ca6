import { type Branch, type Checkpoint, type Message, NotFoundError, type Session, type TenantScope } from '@baton/core';
import type { HandoffConfig } from '../config/handoffTypes.js';
import { historyBound } from '../config/historyWindow.js';
import { HistoryView } from './historyView.js';

/** The session branch a read is for, and the tenant scope its store calls carry. */
export interface BranchTarget {
  sessionId: string;
  branchId: string;
  scope: TenantScope;
}

/** What a load reads from the store before it changes the runtime. */
export interface LoadedBranch {
  session: Session;
  branch: Branch;
  checkpoint: Checkpoint | undefined;
  messages: readonly Message[];
  history: HistoryView;
}

/**
 * Reads what a load of a session branch needs: the session and branch documents, the newest
 * checkpoint (or `checkpointId`), then the messages it covers and those after it: the whole branch,
 * or, when model inputs keep a bounded history ({@link historyBound}: a `historyWindow`, or a first
 * shaping provider's `maxHistoryMessages`, e.g. working memory's budget) and there is a checkpoint,
 * only what that bound and recovery need.
 *
 * @param session the session document when the opener just read it (not read again), else `undefined`
 * @throws {NotFoundError} when the session, branch or checkpoint does not exist
 */
export async function readBranch(
  config: HandoffConfig,
  target: BranchTarget,
  checkpointId: string | undefined,
  session?: Session,
): Promise<LoadedBranch> {
  const { store } = config;
  const { sessionId, branchId, scope } = target;
  session ??= await store.getSession(sessionId, scope);
  if (session === undefined) throw new NotFoundError(`Session ${JSON.stringify(sessionId)} does not exist.`);
  const branch = await store.getBranch(sessionId, branchId, scope);
  if (branch === undefined) {
    throw new NotFoundError(
      `Branch ${JSON.stringify(branchId)} of session ${JSON.stringify(sessionId)} does not exist; create it with session.fork().`,
    );
  }
  // The checkpoint first: a writer stores messages before the checkpoint that points at them, so
  // the messages read after it cover its throughSeq.
  const checkpoint = await store.loadCheckpoint(sessionId, branchId, checkpointId, scope);
  if (checkpointId !== undefined && checkpoint === undefined) {
    throw new NotFoundError(
      `Checkpoint ${JSON.stringify(checkpointId)} of branch ${JSON.stringify(branchId)} does not exist; see session.checkpoints().`,
    );
  }
  const window = config.historyWindow?.messages;
  const bound = historyBound(window, config.contextProviders);
  const fromSeq =
    bound === undefined || checkpoint === undefined ? 1 : Math.max(1, checkpoint.throughSeq - 2 * bound + 1);
  const messages = await store.readMessages(sessionId, branchId, fromSeq === 1 ? scope : { ...scope, fromSeq });
  const history = new HistoryView(config.handoffHistory, {
    ...(window === undefined ? {} : { window }),
    complete: fromSeq === 1,
  });
  history.append(messages);
  if (bound !== undefined) await readBack(config, target, history, bound);
  return { session, branch, checkpoint, messages, history };
}

/**
 * Reads older messages back until agents see more than `window` of them, or the branch's first
 * message is held. More than the window, not as many: the window is cut where it would start with a
 * tool result (its call is outside), and telling that needs the message before it; a history of
 * exactly `window` messages would be given whole, unlike the same branch loaded whole.
 */
async function readBack(
  config: HandoffConfig,
  target: BranchTarget,
  history: HistoryView,
  window: number,
): Promise<void> {
  const { sessionId, branchId, scope } = target;
  // The newest user message is kept by every shaping (working memory keeps it even over budget): hold it too.
  while (!history.complete && (history.visibleCount <= window || !history.holdsUserMessage)) {
    const throughSeq = history.firstSeq - 1;
    const fromSeq = Math.max(1, throughSeq - 2 * (window + 1 - history.visibleCount) + 1);
    const older =
      throughSeq < 1 ? [] : await config.store.readMessages(sessionId, branchId, { ...scope, fromSeq, throughSeq });
    // A store that answers a range before the held messages with nothing would loop here: the view stays as it is.
    if (older.length === 0 && throughSeq >= 1) return;
    history.prepend(older, { complete: fromSeq === 1 });
  }
}
