import type { BatonEvent } from '@baton/core';
import { type EventSourceMessage, EventSourceParserStream } from 'eventsource-parser/stream';

/** An error answer of the desk's API (`{ error: { code, message } }`), with its HTTP status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** An event as the server streamed it: the Baton event and its SSE id (`<session>/<branch>/<seq>.<index>`). */
export type StreamedEvent = BatonEvent & { eventId: string };

/**
 * The browser's client of `@baton/server` under `/api`. The demo's auth hook takes the customer id
 * from `Authorization: Bearer <id>` (a real desk puts its own sign-in there).
 */
export class DeskApi {
  constructor(readonly customerId: string) {}

  /** Calls a JSON route and returns its body. @throws {ApiError} for an error answer */
  async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await this.#fetch(method, path, body, 'application/json');
    return (await response.json()) as T;
  }

  /** Calls a route that answers with Server-Sent Events and yields each event as it arrives. @throws {ApiError} for an error answer */
  async *stream(method: string, path: string, body?: unknown): AsyncGenerator<StreamedEvent> {
    const response = await this.#fetch(method, path, body, 'text/event-stream');
    if (response.body === null) return;
    const messages = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
    const reader = messages.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        const message: EventSourceMessage = value;
        yield { ...(JSON.parse(message.data) as BatonEvent), eventId: message.id ?? '' };
      }
    } finally {
      reader.releaseLock();
    }
  }

  async #fetch(method: string, path: string, body: unknown, accept: string): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.customerId}`, accept };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`/api${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!response.ok) {
      const answer = (await response.json().catch(() => ({}))) as { error?: { code?: string; message?: string } };
      throw new ApiError(response.status, answer.error?.code ?? 'HTTP', answer.error?.message ?? response.statusText);
    }
    return response;
  }
}
