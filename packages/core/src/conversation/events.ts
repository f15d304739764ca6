import type { CheckpointManifestEntry } from './checkpoint.js';
import type { Message, ToolCall } from './message.js';
import type { Usage } from '../models/modelClient.js';
import type { Request } from './request.js';

/** Fields every event has. */
export interface EventBase {
  sessionId: string;
  branchId: string;
}

/** A turn began: a user message was sent, or a pending request was answered. */
export interface TurnStartedEvent extends EventBase {
  type: 'turn.started';
  turn: number;
}
/** An agent (or other executor) took control. */
export interface AgentStartedEvent extends EventBase {
  type: 'agent.started';
  agent: string;
}
/** A piece of assistant text as the model streams it. */
export interface MessageDeltaEvent extends EventBase {
  type: 'message.delta';
  agent: string;
  delta: string;
}
/** A message was committed to the branch (user, assistant, tool or context). */
export interface MessageEvent extends EventBase {
  type: 'message';
  message: Message;
}
/**
 * A tool call starts running in this stream. Each event stream is self-contained: a step resumed
 * in a later stream (after an approval, an answer or a crash) announces again the calls it runs
 * there, so a call may be announced once when the model makes it and once when it finally runs.
 */
export interface ToolCallEvent extends EventBase {
  type: 'tool.call';
  agent: string;
  toolCall: ToolCall;
}
/** A tool call finished (or failed, `isError`). `content` is the text the model will see. */
export interface ToolResultEvent extends EventBase {
  type: 'tool.result';
  agent: string;
  toolCallId: string;
  toolName: string;
  content: string;
  isError: boolean;
  durationMs: number;
}
/** Control moved from one agent to another. */
export interface HandoffEvent extends EventBase {
  type: 'handoff';
  from: string;
  to: string;
  reason?: string;
}
/** The turn paused on a request to the user or a human approver. */
export interface RequestEvent extends EventBase {
  type: 'request';
  request: Request;
}
/** A checkpoint was saved. */
export interface CheckpointEvent extends EventBase {
  type: 'checkpoint';
  checkpoint: CheckpointManifestEntry;
}
/** Control returned to the user; everything of the turn is durable (docs/architecture.md invariant 4). */
export interface TurnCompletedEvent extends EventBase {
  type: 'turn.completed';
  turn: number;
  usage: Usage;
  /** The agent that will take the next turn. */
  nextAgent: string;
}
/** The session was closed. */
export interface SessionClosedEvent extends EventBase {
  type: 'session.closed';
  reason: string;
}
/** Something went wrong. `fatal: false` errors were answered (e.g. a forbidden handoff got an error result) and the turn goes on. */
export interface ErrorEvent extends EventBase {
  type: 'error';
  code: string;
  message: string;
  fatal: boolean;
}

/** Every event a turn emits, discriminated by `type` (docs/architecture.md "Events"). */
export type BatonEvent =
  | TurnStartedEvent
  | AgentStartedEvent
  | MessageDeltaEvent
  | MessageEvent
  | ToolCallEvent
  | ToolResultEvent
  | HandoffEvent
  | RequestEvent
  | CheckpointEvent
  | TurnCompletedEvent
  | SessionClosedEvent
  | ErrorEvent;

/** The `type` strings of {@link BatonEvent}. */
export type BatonEventType = BatonEvent['type'];
