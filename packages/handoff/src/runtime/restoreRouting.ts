import { CheckpointCorruptError, ConfigurationError } from '@baton/core';
import { z } from 'zod';
import { createRoutingDriver, type RoutingDriver } from '../routing/routingDriver.js';
import type { WorkflowCore } from './workflowCore.js';

/** The shape a persisted routing snapshot must have before XState is asked to restore it. */
const PersistedRoutingSchema = z.object({
  status: z.enum(['active', 'done']),
  value: z.enum(['idle', 'running', 'awaitingRequest', 'closed']),
  context: z.object({
    coordinator: z.string(),
    activeAgent: z.string(),
    previousAgent: z.string().nullable(),
    turn: z.number().int().nonnegative(),
    handoffsThisTurn: z.number().int().nonnegative(),
  }),
  // The routing machine has no child actors and no history states: anything here is damage, and XState would fail on it with a TypeError.
  children: z.strictObject({}),
  historyValue: z.strictObject({}),
});

/**
 * The routing machine of session `sessionId` restored from a checkpoint's persisted snapshot (a
 * fresh one when `persisted` is `undefined`), checked before and after XState restores it.
 *
 * @throws {CheckpointCorruptError} when the snapshot is invalid or cannot be restored
 * @throws {ConfigurationError} when it names an agent the workflow does not have
 */
export function restoreRouting(core: WorkflowCore, sessionId: string, persisted: unknown): RoutingDriver {
  const { machine, config } = core;
  const parsed = persisted === undefined ? undefined : PersistedRoutingSchema.safeParse(persisted);
  if (parsed !== undefined && !parsed.success) {
    const issue = parsed.error.issues[0];
    throw new CheckpointCorruptError(
      `The routing snapshot of session ${JSON.stringify(sessionId)} is invalid at ${issue?.path.join('.') || '(root)'}: ${issue?.message}; it was not loaded. Open the session with an older checkpointId to recover.`,
    );
  }
  const options = { machine, config: core.routing, persist: core.persistRouting, direct: core.directRouting };
  // Restored from the snapshot as stored (keys the schema does not name stay, as XState keeps them).
  const actor = createRoutingDriver(
    config.inspect === undefined ? options : { ...options, inspect: config.inspect },
    parsed && (persisted as typeof parsed.data),
  );
  if (actor.failed !== undefined) {
    actor.stop();
    throw new CheckpointCorruptError(
      `The routing snapshot of session ${JSON.stringify(sessionId)} cannot be restored; it was not loaded.`,
      { cause: actor.failed },
    );
  }
  const context = actor.getSnapshot().context;
  for (const agent of [context.activeAgent, context.coordinator]) {
    if (agent !== undefined && !config.participants.has(agent)) {
      actor.stop();
      throw new ConfigurationError(
        `Session ${JSON.stringify(sessionId)} was checkpointed with agent ${JSON.stringify(agent)}, which workflow ${JSON.stringify(config.name)} does not have. Add it to participants() to load this session.`,
      );
    }
  }
  return actor;
}
