/**
 * @baton/handoff: a coordinator agent routes each turn to specialists through an XState v5 machine;
 * agents ask the user for input or a human for approval; turns pause, checkpoint (by reference,
 * never copying messages) and resume in another process; branches fork by reference.
 *
 * @example
 * ```ts
 * import { HandoffBuilder } from '@baton/handoff';
 * const desk = new HandoffBuilder({ name: 'support-desk' }).participants(triage, billing).coordinator(triage).build();
 * const session = await desk.session({ id: 'chat-81' });
 * for await (const event of session.send('I was charged twice')) console.log(event.type);
 * ```
 */
export { HandoffBuilder } from './handoffBuilder.js';
export { HandoffSession, type SessionHost } from './handoffSession.js';
export {
  bindHandoffTool,
  createHandoffTool,
  HANDOFF_TOOL_PREFIX,
  type HandoffCheck,
  handoffToolName,
  handoffToolTemplate,
  isHandoffToolName,
} from './handoffTools.js';
export type {
  AutonomousOptions,
  CheckpointFrequency,
  CheckpointKeep,
  CheckpointOptions,
  HandoffConfig,
  HandoffHistoryMode,
  Participant,
  RequestAnswer,
  ReturnPolicy,
  SessionOptions,
  TerminationCondition,
  TerminationContext,
  TurnOptions,
} from './handoffTypes.js';
export { type HandoffRunRequest, type HandoffRunResult, HandoffWorkflow } from './handoffWorkflow.js';
export { HistoryView } from './historyView.js';
export { type HandoffGraph, handoffGraphToMermaid } from './mermaid.js';
export { applyRoutingEffect, type ReplayResult, replayHistory, storedControl } from './replayHistory.js';
export { replaySession, type SessionReplay } from './replaySession.js';
export { REQUEST_USER_INPUT, requestUserInputTool } from './requestUserInput.js';
export {
  createRoutingMachine,
  handoffRefusal,
  type RoutingActor,
  type RoutingConfig,
  type RoutingContext,
  type RoutingEvent,
  type RoutingMachine,
  type RoutingSnapshot,
  type RoutingStateValue,
  routingState,
} from './routingMachine.js';
export { SessionLock } from './sessionLock.js';
export { DEFAULT_AUTONOMOUS_PROMPT } from './turnRunner.js';
export { type InnerPosition, innerPosition, type NestableWorkflow, WorkflowExecutor, type WorkflowExecutorOptions } from './workflowExecutor.js';
export { type RunnableWorkflow, type WorkflowToolOptions, workflowTool } from './workflowTool.js';
