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
export { DEFAULT_STORE_LIMITS, HandoffBuilder } from './workflow/handoffBuilder.js';
export { HandoffSession, type SessionHost } from './session/handoffSession.js';
export { DEFAULT_HISTORY_PAGE, type HistoryPagesOptions, type HistoryRange } from './session/sessionHistory.js';
export {
  bindHandoffTool,
  createHandoffTool,
  HANDOFF_TOOL_PREFIX,
  type HandoffCheck,
  handoffToolName,
  handoffToolTemplate,
  isHandoffToolName,
} from './routing/handoffTools.js';
export type {
  AutonomousOptions,
  CheckpointFrequency,
  CheckpointKeep,
  CheckpointOptions,
  HandoffConfig,
  HandoffHistoryMode,
  HandoffRunOptions,
  HandoffRunRequest,
  HandoffRunResult,
  Participant,
  RequestAnswer,
  ReturnPolicy,
  SessionOptions,
  SessionSettings,
  SessionTarget,
  TerminationCondition,
  TerminationContext,
  SendOptions,
  TurnOptions,
} from './config/handoffTypes.js';
export { HandoffWorkflow } from './workflow/handoffWorkflow.js';
export { type TurnResult, TurnStream } from './session/turnStream.js';
export { inProcessRunner, type RunnerLease, type SessionRunner } from './session/sessionRunner.js';
export { HistoryView, type HistoryViewOptions } from './runtime/historyView.js';
export { type HistoryWindow, historyBound, windowModelInput, windowStart } from './config/historyWindow.js';
export { type HandoffGraph, handoffGraphToMermaid } from './routing/mermaid.js';
export { applyRoutingEffect, type ReplayResult, replayHistory, storedControl } from './routing/replayHistory.js';
export { replaySession, type SessionReplay } from './inspect/replaySession.js';
export { REQUEST_USER_INPUT, requestUserInputTool } from './routing/requestUserInput.js';
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
} from './routing/routingMachine.js';
export { SessionLock } from './session/sessionLock.js';
export { APPROVAL_GRANTS_KEY, approvalGrantsOf } from './turn/approvalGrants.js';
export { DEFAULT_AUTONOMOUS_PROMPT } from './turn/turnRunner.js';
export {
  type InnerPosition,
  innerPosition,
  type NestableWorkflow,
  WorkflowExecutor,
  type WorkflowExecutorOptions,
} from './workflow/workflowExecutor.js';
export { type RunnableWorkflow, type WorkflowToolOptions, workflowTool } from './workflow/workflowTool.js';
export type { TelemetryOptions } from './config/telemetryOptions.js';
export { formatTraceparent, parseTraceparent } from './telemetry/traceparent.js';
export { TRACER_NAME } from './telemetry/tracedTurn.js';
export { clip, type FormatTimelineOptions, formatTimeline } from './inspect/formatTimeline.js';
export { type SessionTimeline, sessionTimeline, type TimelineEntry } from './inspect/sessionTimeline.js';
export { observedGraphToMermaid, type TimelineMermaidOptions, timelineToMermaid } from './inspect/timelineMermaid.js';
