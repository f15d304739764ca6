import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { LoggedEvent, LogItem } from './branchLog.js';
import { comparePositions, type EventPosition } from './eventId.js';
import type { EventQueue } from './eventQueue.js';
import { UI_MESSAGE_STREAM_HEADERS, type UIMessageChunk, UIMessageChunker } from './uiMessageStream.js';

/** What one SSE response sends: events already known, then live ones from the branch's queue. */
export interface SseSource {
  /** Events to send first (a replay), oldest first. */
  replay: readonly LoggedEvent[];
  /** Live events of the branch; `undefined` when nothing more will come. */
  queue: EventQueue<LogItem> | undefined;
  /** Live events at or before this position were sent already (by the replay) and are skipped. */
  after: EventPosition;
  /** Keep the response open after the running turn ends, for the turns that follow (`?follow=true`). */
  follow: boolean;
  /** Milliseconds between keep-alive comments while the stream is idle (default 15,000). */
  keepAliveMs?: number;
}

/**
 * Streams a branch's events as Server-Sent Events (WHATWG HTML, "Server-sent events"): each with
 * `id: <sessionId>/<branchId>/<seq>.<index>`, `event: <event type>` and the event as JSON `data`.
 * The response ends when the running turn ends (unless `follow`); a client that disconnects only
 * stops listening, the turn goes on.
 */
export function sseResponse(c: Context, source: SseSource): Response {
  const { queue } = source;
  return streamSSE(c, async (stream) => {
    stream.onAbort(() => queue?.close());
    let last = source.after;
    const send = async (logged: LoggedEvent): Promise<void> => {
      await stream.writeSSE({ id: logged.id, event: logged.event.type, data: JSON.stringify(logged.event) });
      last = logged.position;
    };
    for (const logged of source.replay) await send(logged);
    if (queue === undefined) return;
    const keepAlive = setInterval(
      () => void stream.write(': keep-alive\n\n').catch(() => queue.close()),
      source.keepAliveMs ?? 15_000,
    );
    try {
      for await (const item of queue) {
        if (item.kind === 'run.ended') {
          if (!source.follow) break;
        } else if (comparePositions(item.logged.position, last) > 0) await send(item.logged);
      }
    } finally {
      clearInterval(keepAlive);
      queue.close();
    }
  });
}

/**
 * Streams the running turn in the Vercel AI SDK's UI message stream protocol (see
 * {@link UIMessageChunker} for which events become which chunks), ending with `data: [DONE]`, so a
 * `useChat` front end reads it unchanged.
 */
export function uiMessageStreamResponse(c: Context, queue: EventQueue<LogItem>, messageId: string): Response {
  for (const [name, value] of Object.entries(UI_MESSAGE_STREAM_HEADERS)) c.header(name, value);
  return streamSSE(c, async (stream) => {
    stream.onAbort(() => queue.close());
    const chunker = new UIMessageChunker(messageId);
    const write = (chunk: UIMessageChunk) => stream.writeSSE({ data: JSON.stringify(chunk) });
    try {
      for await (const item of queue) {
        if (item.kind === 'run.ended') break;
        for (const chunk of chunker.map(item.logged.event)) await write(chunk);
      }
      for (const chunk of chunker.finish()) await write(chunk);
      await stream.writeSSE({ data: '[DONE]' });
    } finally {
      queue.close();
    }
  });
}
