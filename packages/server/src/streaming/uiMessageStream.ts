import type { BatonEvent } from '@baton/core';

/**
 * The chunks of the Vercel AI SDK's UI message stream protocol (v1, header
 * `x-vercel-ai-ui-message-stream: v1`; `UIMessageChunk` in the `ai` package) that Baton's events map to.
 */
export type UIMessageChunk =
  | { type: 'start'; messageId?: string }
  | { type: 'start-step' }
  | { type: 'finish-step' }
  | { type: 'text-start'; id: string }
  | { type: 'text-delta'; id: string; delta: string }
  | { type: 'text-end'; id: string }
  | { type: 'tool-input-available'; toolCallId: string; toolName: string; input: unknown; dynamic: true }
  | { type: 'tool-output-available'; toolCallId: string; output: unknown; dynamic: true }
  | { type: 'tool-output-error'; toolCallId: string; errorText: string; dynamic: true }
  | { type: 'tool-approval-request'; approvalId: string; toolCallId: string }
  | { type: `data-${string}`; data: unknown }
  | { type: 'error'; errorText: string }
  | { type: 'finish' };

/** The response headers of a UI message stream (as the `ai` package's `UI_MESSAGE_STREAM_HEADERS`). */
export const UI_MESSAGE_STREAM_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-vercel-ai-ui-message-stream': 'v1',
  'x-accel-buffering': 'no',
};

/**
 * Maps one call's Baton events to UI message chunks, so a `useChat` front end renders a turn as one
 * assistant message:
 *
 * | Baton event | chunks |
 * |---|---|
 * | `turn.started` | `start` (once per call) |
 * | `agent.started` | `finish-step` (of the previous agent), `start-step`, `data-agent` `{ agent }` |
 * | `message.delta` | `text-start` (first piece of a text), `text-delta` |
 * | `message` (assistant) | `text-end` when a text was open |
 * | `tool.call` | `tool-input-available` (a dynamic tool: `toolName`, the parsed arguments as `input`) |
 * | `tool.result` | `tool-output-available` (`output`: the result text), or `tool-output-error` when `isError`; a result of a call this stream did not announce (the answer to a request of an earlier turn) is announced first with `input: null` |
 * | `handoff` | `data-handoff` `{ from, to, reason? }` |
 * | `request` | `data-request` (the `Request`); a `tool_approval` also `tool-approval-request` (`approvalId` = the request id) |
 * | `session.closed` | `data-session-closed` `{ reason }` |
 * | `error` (fatal) | `error` `{ errorText }` |
 * | `turn.completed` | `data-turn-completed` `{ turn, nextAgent, usage }` |
 * | end of the call | `text-end` if open, `finish-step`, `finish` |
 *
 * Not mapped: `checkpoint`, non-fatal `error` (a refused handoff: its tool result says so), and the
 * user's and tool messages (the front end has the user's; tool results come as tool outputs).
 */
export class UIMessageChunker {
  #started = false;
  #inStep = false;
  #text: string | undefined;
  #texts = 0;
  readonly #calls = new Set<string>();

  constructor(readonly messageId: string) {}

  /** The chunks of one event. */
  map(event: BatonEvent): UIMessageChunk[] {
    const chunks: UIMessageChunk[] = [];
    if (!this.#started) {
      this.#started = true;
      chunks.push({ type: 'start', messageId: this.messageId });
    }
    switch (event.type) {
      case 'agent.started':
        this.#endText(chunks);
        if (this.#inStep) chunks.push({ type: 'finish-step' });
        this.#inStep = true;
        chunks.push({ type: 'start-step' }, { type: 'data-agent', data: { agent: event.agent } });
        break;
      case 'message.delta':
        if (this.#text === undefined) {
          this.#text = `text-${++this.#texts}`;
          chunks.push({ type: 'text-start', id: this.#text });
        }
        chunks.push({ type: 'text-delta', id: this.#text, delta: event.delta });
        break;
      case 'message':
        if (event.message.role === 'assistant') this.#endText(chunks);
        break;
      case 'tool.call':
        this.#calls.add(event.toolCall.id);
        chunks.push({
          type: 'tool-input-available',
          toolCallId: event.toolCall.id,
          toolName: event.toolCall.name,
          input: parseArguments(event.toolCall.arguments),
          dynamic: true,
        });
        break;
      case 'tool.result':
        // A result of a call made in an earlier stream (the answer to a request) is announced first, its input unknown here.
        if (!this.#calls.has(event.toolCallId))
          chunks.push({
            type: 'tool-input-available',
            toolCallId: event.toolCallId,
            toolName: event.toolName,
            input: null,
            dynamic: true,
          });
        chunks.push(
          event.isError
            ? { type: 'tool-output-error', toolCallId: event.toolCallId, errorText: event.content, dynamic: true }
            : { type: 'tool-output-available', toolCallId: event.toolCallId, output: event.content, dynamic: true },
        );
        break;
      case 'handoff':
        chunks.push({
          type: 'data-handoff',
          data: { from: event.from, to: event.to, ...(event.reason === undefined ? {} : { reason: event.reason }) },
        });
        break;
      case 'request':
        chunks.push({ type: 'data-request', data: event.request });
        if (event.request.type === 'tool_approval')
          chunks.push({
            type: 'tool-approval-request',
            approvalId: event.request.id,
            toolCallId: event.request.toolCallId,
          });
        break;
      case 'session.closed':
        chunks.push({ type: 'data-session-closed', data: { reason: event.reason } });
        break;
      case 'error':
        if (event.fatal) chunks.push({ type: 'error', errorText: event.message });
        break;
      case 'turn.completed':
        this.#endText(chunks);
        chunks.push({
          type: 'data-turn-completed',
          data: { turn: event.turn, nextAgent: event.nextAgent, usage: event.usage },
        });
        break;
      default:
        break;
    }
    return chunks;
  }

  /** The chunks that end the message. */
  finish(): UIMessageChunk[] {
    const chunks: UIMessageChunk[] = this.#started ? [] : [{ type: 'start', messageId: this.messageId }];
    this.#endText(chunks);
    if (this.#inStep) chunks.push({ type: 'finish-step' });
    this.#inStep = false;
    chunks.push({ type: 'finish' });
    return chunks;
  }

  #endText(chunks: UIMessageChunk[]): void {
    if (this.#text === undefined) return;
    chunks.push({ type: 'text-end', id: this.#text });
    this.#text = undefined;
  }
}

function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
