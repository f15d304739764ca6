import { type EventSourceMessage, EventSourceParserStream } from 'eventsource-parser/stream';

/** Bearer tokens of the test tenants: `acme` (users ann and bob) and `globex` (user gil). */
export const TOKENS: Record<string, { tenantId: string; userId: string }> = {
  'Bearer acme-ann': { tenantId: 'acme', userId: 'ann' },
  'Bearer acme-bob': { tenantId: 'acme', userId: 'bob' },
  'Bearer globex-gil': { tenantId: 'globex', userId: 'gil' },
};

/** A small client of the server's API for one token. */
export function client(baseUrl: string, token = 'Bearer acme-ann') {
  const call = (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
    signal?: AbortSignal,
  ) =>
    fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        authorization: token,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      ...(signal === undefined ? {} : { signal }),
    });
  return {
    call,
    // biome-ignore lint/suspicious/noExplicitAny: the tests read many response shapes
    async json<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
      const response = await call(method, path, body, { accept: 'application/json' });
      return { status: response.status, body: (await response.json()) as T };
    },
    /** Sends a request whose answer is an event stream and collects the stream to its end. */
    async stream(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
      const response = await call(method, path, body, { accept: 'text/event-stream', ...headers });
      return {
        status: response.status,
        contentType: response.headers.get('content-type'),
        events: await readEvents(response),
      };
    },
  };
}

/** An SSE message with its `data` parsed. */
export interface ReceivedEvent {
  id: string;
  event: string;
  // biome-ignore lint/suspicious/noExplicitAny: the tests read the JSON of many event shapes
  data: any;
}

/** The SSE messages of a response, parsed with eventsource-parser. */
export async function* sseMessages(response: Response): AsyncGenerator<ReceivedEvent> {
  if (response.body === null) return;
  const stream = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
  for await (const message of stream as unknown as AsyncIterable<EventSourceMessage>) {
    yield { id: message.id ?? '', event: message.event ?? 'message', data: JSON.parse(message.data) };
  }
}

/** Every SSE message of a response. */
export async function readEvents(response: Response): Promise<ReceivedEvent[]> {
  const events: ReceivedEvent[] = [];
  for await (const event of sseMessages(response)) events.push(event);
  return events;
}
