/**
 * @baton/temporal: Baton conversations run by a pool of Temporal workers. One session workflow per
 * conversation branch takes messages, answers and close as Updates and runs each turn as an activity
 * on any worker; the Baton store stays the system of record (a worker killed mid-turn is replaced and
 * the turn finished by the recovery rules); request deadlines and idle close are durable timers.
 *
 * @example
 * ```ts
 * import { createBatonWorker, TemporalSessions } from '@baton/temporal';
 * const worker = await createBatonWorker({ connection, taskQueue: 'desk', workflow: desk }); // on each worker machine
 * void worker.run();
 * const sessions = new TemporalSessions({ client, taskQueue: 'desk' });
 * const turn = await sessions.session({ sessionId: 'chat-81' }).send('I was charged twice');
 * ```
 */
export { batonFailure } from './batonFailure.js';
export { type BatonWorkerOptions, batonWorkflowsPath, bundleBatonWorkflows, createBatonWorker } from './batonWorker.js';
export { type CommittedEventsOptions, committedEvents } from './committedEvents.js';
export { committedTurn, headSeqOf } from './committedTurn.js';
export { sendAssets } from './sendAssets.js';
export {
  type CarriedState,
  type CommittedTurn,
  closeUpdate,
  type OpenedSession,
  REQUEST_EXPIRED,
  respondUpdate,
  type SendArgs,
  type SessionTarget,
  type SessionTimers,
  type SessionWorkflowInput,
  sendUpdate,
  sessionStateQuery,
  type TrackedRequest,
  TURN_FAILED,
  type TurnActivityInput,
  type TurnActivitySettings,
  type TurnOperation,
} from './sessionContract.js';
export { sessionWorkflowId } from './sessionWorkflowId.js';
export { type TemporalRunnerOptions, temporalRunner } from './temporalRunner.js';
export { type TemporalCallOptions, TemporalSession } from './temporalSession.js';
export { TemporalSessions, type TemporalSessionsOptions } from './temporalSessions.js';
export { createTurnActivities, type TurnActivities } from './turnActivities.js';
export { UpdateWaitEndedError } from './updateWaitEndedError.js';
