import { InvalidInputError } from '@baton/core';
import { DISCARD_CONTROL } from '../routing/replayHistory.js';
import { routingState } from '../routing/routingMachine.js';
import { saveCheckpoint } from '../runtime/checkpointer.js';
import { answerOpenToolCalls } from '../turn/openToolCalls.js';
import { settleTurn } from '../runtime/checkpointer.js';
import type { SessionRuntime } from '../runtime/sessionRuntime.js';
import { withdrawRequests } from '../turn/withdrawRequests.js';

/**
 * Gives up the unfinished turn (interrupted by a crash, a failure or a cancellation, or paused on
 * requests) instead of finishing it: tool calls of the interrupted step get a result (finished ones
 * keep theirs, the others a "Discarded" error result carrying the discard as its control), pending
 * requests are dropped, the routing machine returns to `idle` (control goes where it would after an
 * answer), state changes the turn made are kept, and a checkpoint is saved; then participants
 * withdraw what they queued for the dropped requests (a `HumanExecutor`'s tasks). Everything the turn
 * stored stays in the history; the next turn starts fresh.
 *
 * @throws {InvalidInputError} when no turn is unfinished
 */
export async function discardTurn(runtime: SessionRuntime): Promise<void> {
  const state = routingState(runtime.snapshot);
  if (state !== 'running' && state !== 'awaitingRequest') {
    throw new InvalidInputError(
      `Session ${JSON.stringify(runtime.sessionId)} has no unfinished turn to discard (it is ${state}).`,
    );
  }
  const dropped = runtime.dropRequests();
  const committed = await answerOpenToolCalls(
    runtime,
    'Discarded: the turn was given up before this call was answered.',
    { ...DISCARD_CONTROL },
  );
  if (committed.length === 0) runtime.actor.send({ type: 'DISCARD' });
  await settleTurn(runtime);
  if (runtime.config.checkpointEvery === 'manual') await saveCheckpoint(runtime);
  await withdrawRequests(runtime, dropped);
}
