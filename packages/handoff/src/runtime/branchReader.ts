import {
  type Branch,
  type Checkpoint,
  type Message,
  type ModelMessage,
  NotFoundError,
  type Session,
  type TenantScope,
  toModelMessage,
} from '@baton/core';
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
 * or, when model inputs keep a bounded history and there is a checkpoint, only what that bound and
 * recovery need: the messages after the checkpoint, and older ones read backwards in pages until
 * a `historyWindow` or the first shaping provider's `maxHistoryMessages` ({@link historyBound}) is
 * reached, or its `olderHistoryNeeded` (e.g. working memory's token budget) answers `0`.
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
  const need = budgetNeed(config);
  const firstPage = need?.([]);
  const paged = checkpoint !== undefined && (bound !== undefined || firstPage !== undefined);
  // At least the checkpoint's last message (recovery looks at messages from throughSeq on); a budget's first page is small.
  const budgetPage = firstPage === undefined ? Infinity : Math.min(firstPage, MIN_PAGE);
  const page = Math.max(1, Math.min(bound === undefined ? Infinity : 2 * bound, budgetPage));
  const fromSeq = paged ? Math.max(1, checkpoint.throughSeq - page + 1) : 1;
  const messages = await store.readMessages(sessionId, branchId, fromSeq === 1 ? scope : { ...scope, fromSeq });
  const history = new HistoryView(config.handoffHistory, {
    ...(window === undefined ? {} : { window }),
    complete: fromSeq === 1,
  });
  history.append(messages);
  if (paged) await readBack(config, target, history, { bound, need: firstPage === undefined ? undefined : need });
  return { session, branch, checkpoint, messages, history };
}

/** The fewest messages a page read back holds (a round trip for one or two messages costs more than it saves). */
const MIN_PAGE = 16;

/**
 * The first shaping provider's `olderHistoryNeeded` (what its token budget still needs), bound to
 * it; `undefined` when that provider declares none. Only the first: later shapers see its output.
 */
function budgetNeed(config: HandoffConfig): ((newest: readonly ModelMessage[]) => number | undefined) | undefined {
  const first = config.contextProviders.find((provider) => provider.prepareModelInput !== undefined);
  return first?.olderHistoryNeeded?.bind(first);
}

/**
 * Reads older messages back, a page at a time, until what is held settles every model input: agents
 * see more than `bound` of them (the window cuts before; more than the window, not as many, since
 * a window that would start with a tool result is cut after it, and telling that needs the message
 * before it), or the first shaper's budget needs no older one (`need` answers `0`), or the branch's
 * first message is held. Either way a user message is held (every shaping keeps the newest one). A
 * page is what the bound still lacks (twice, for the messages agents do not see) or, with a budget,
 * what it estimates, scaled likewise, at least {@link MIN_PAGE} and at most as many as are held
 * (the first: {@link MIN_PAGE}), so a budgeted open reads fewer than twice the newest messages that
 * settle its inputs, plus {@link MIN_PAGE}.
 */
async function readBack(
  config: HandoffConfig,
  target: BranchTarget,
  history: HistoryView,
  limits: { bound: number | undefined; need: ((newest: readonly ModelMessage[]) => number | undefined) | undefined },
): Promise<void> {
  const { sessionId, branchId, scope } = target;
  const { bound, need } = limits;
  const window = config.historyWindow?.messages;
  while (!history.complete) {
    const held = history.messages.length;
    const visible = history.visibleCount;
    if (bound !== undefined && visible > bound && history.holdsUserMessage) return;
    let page = Math.max(MIN_PAGE, bound === undefined ? Infinity : 2 * (bound + 1 - visible));
    if (need !== undefined) {
      const seen = history.visible;
      const more = need(seen.map(toModelMessage));
      // With a window, a view starting with a tool result may be cut after it where the whole branch is not: read past it.
      if (more === 0 && (window === undefined || seen[0]?.role !== 'tool')) return;
      // The budget's estimate, scaled by the messages agents do not see; at most doubling what is held.
      const estimate = Math.ceil((more ?? Infinity) * (held / Math.max(1, visible)));
      page = Math.min(page, Math.max(MIN_PAGE, estimate), Math.max(MIN_PAGE, held));
    }
    const throughSeq = history.firstSeq - 1;
    const fromSeq = Math.max(1, throughSeq - page + 1);
    const older =
      throughSeq < 1 ? [] : await config.store.readMessages(sessionId, branchId, { ...scope, fromSeq, throughSeq });
    // A store that answers a range before the held messages with nothing would loop here: the view stays as it is.
    if (older.length === 0 && throughSeq >= 1) return;
    history.prepend(older, { complete: fromSeq === 1 });
  }
}
