import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  chatChunks,
  chatCompletion,
  responseBody,
  responseEvents,
  type ScriptedAnswer,
  type ScriptedToolCall,
} from './openaiWire.js';

export type { ScriptedAnswer, ScriptedToolCall } from './openaiWire.js';

/** A scripted HTTP error with OpenAI's error body `{ error: { message, type, param, code } }`. */
export interface ScriptedError {
  type: 'error';
  status: number;
  message: string;
  /** The body's `error.type` (default `'invalid_request_error'`). */
  errorType?: string;
  code?: string | null;
  /** Extra response headers, e.g. `{ 'retry-after-ms': '10' }`. */
  headers?: Record<string, string>;
}

/** Streams `text` and then holds the stream open without finishing, until the client goes away. */
export interface ScriptedStall {
  type: 'stall';
  text?: string;
}

/**
 * Starts a 200 stream, sends `text`, then fails inside the stream: with `message`, as the API does
 * (a chat `data: {"error": …}` chunk; a Responses `response.failed` event); without, the stream
 * just ends early (a dropped connection).
 */
export interface ScriptedStreamFailure {
  type: 'streamFailure';
  text?: string;
  message?: string;
}

/** One scripted reply; each request takes the next one from the queue. */
export type OpenAIServerReply = ScriptedAnswer | ScriptedError | ScriptedStall | ScriptedStreamFailure;

/** Builders for {@link OpenAIServerReply}. */
export const reply = {
  /** A text answer. */
  text: (text: string, extra: Omit<ScriptedAnswer, 'type' | 'text'> = {}): ScriptedAnswer => ({
    type: 'answer',
    text,
    ...extra,
  }),
  /** An answer with tool calls (and optional text). */
  toolCalls: (
    toolCalls: ScriptedToolCall[],
    extra: Omit<ScriptedAnswer, 'type' | 'toolCalls'> = {},
  ): ScriptedAnswer => ({
    type: 'answer',
    toolCalls,
    ...extra,
  }),
  /** An HTTP error with an OpenAI error body. */
  error: (
    status: number,
    message: string,
    extra: Omit<ScriptedError, 'type' | 'status' | 'message'> = {},
  ): ScriptedError => ({
    type: 'error',
    status,
    message,
    ...extra,
  }),
  /** A stream that never finishes (for abort tests). */
  stall: (text = ''): ScriptedStall => ({ type: 'stall', text }),
  /** A stream that reports an error part way. */
  streamError: (message: string, text = ''): ScriptedStreamFailure => ({ type: 'streamFailure', message, text }),
  /** A stream that ends part way without finishing. */
  cut: (text = ''): ScriptedStreamFailure => ({ type: 'streamFailure', text }),
};

/** A request as the server received it. `body` is the parsed JSON body. */
export interface RecordedOpenAIRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary wire fields
  body: any;
}

/** A running fixture server. Dispose it with `await using` or `close()`. */
export interface OpenAIServer extends AsyncDisposable {
  /** e.g. `http://127.0.0.1:41234/v1`, for the `baseURL` option. */
  baseURL: string;
  /** Every request received, in order. */
  requests: RecordedOpenAIRequest[];
  /** Queues replies for the next requests. */
  enqueue(...replies: OpenAIServerReply[]): void;
  /** Replies queued but not yet served. */
  readonly pendingReplies: number;
  close(): Promise<void>;
}

const ENDPOINTS = new Set(['/v1/chat/completions', '/v1/responses']);

/**
 * Starts an HTTP server on 127.0.0.1 (a free port) speaking OpenAI's wire format for
 * `POST /v1/chat/completions` and `POST /v1/responses`: JSON, or server-sent events when the body
 * has `stream: true`. Each request is recorded and answered with the next queued reply; with none
 * queued it answers 400 (not retried by the SDK) naming the request, so a test fails clearly.
 *
 * @example
 * ```ts
 * await using server = await startOpenAIServer();
 * server.enqueue(reply.text('Hello!'));
 * const model = new OpenAIChatModel({ model: 'gpt-test', baseURL: server.baseURL, apiKey: 'sk-test' });
 * ```
 */
export async function startOpenAIServer(): Promise<OpenAIServer> {
  const queue: OpenAIServerReply[] = [];
  const requests: RecordedOpenAIRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const path = (req.url ?? '').split('?')[0] ?? '';
      let body: unknown = raw;
      try {
        body = raw === '' ? undefined : JSON.parse(raw);
      } catch {
        // recorded as the raw text
      }
      requests.push({ method: req.method ?? '', path, headers: req.headers, body });
      const requestNo = requests.length;
      if (req.method !== 'POST' || !ENDPOINTS.has(path)) {
        sendError(
          res,
          requestNo,
          reply.error(
            404,
            `The fixture serves POST /v1/chat/completions and /v1/responses, not ${req.method} ${path}.`,
          ),
        );
        return;
      }
      const next = queue.shift();
      if (next === undefined) {
        sendError(
          res,
          requestNo,
          reply.error(400, `openaiServer has no scripted reply for request #${requestNo} (${path}); enqueue one.`, {
            errorType: 'fixture_error',
          }),
        );
        return;
      }
      const run = () =>
        serve(
          res,
          path,
          body as { stream?: boolean; model?: string; stream_options?: { include_usage?: boolean } },
          next,
          requestNo,
        );
      if (next.type === 'answer' && next.delayMs !== undefined) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          if (!res.destroyed) run();
        }, next.delayMs);
        timers.add(timer);
      } else run();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  const close = async (): Promise<void> => {
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...replies) => {
      queue.push(...replies);
    },
    get pendingReplies() {
      return queue.length;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

function sendError(res: ServerResponse, requestNo: number, error: ScriptedError): void {
  res.writeHead(error.status, {
    'content-type': 'application/json',
    'x-request-id': `req_${requestNo}`,
    ...error.headers,
  });
  res.end(
    JSON.stringify({
      error: {
        message: error.message,
        type: error.errorType ?? 'invalid_request_error',
        param: null,
        code: error.code ?? null,
      },
    }),
  );
}

function serve(
  res: ServerResponse,
  path: string,
  body: { stream?: boolean; model?: string; stream_options?: { include_usage?: boolean } } | undefined,
  next: OpenAIServerReply,
  requestNo: number,
): void {
  if (next.type === 'error') {
    sendError(res, requestNo, next);
    return;
  }
  const model = body?.model ?? 'unknown-model';
  const chat = path === '/v1/chat/completions';
  const headers = { 'x-request-id': `req_${requestNo}` };
  if (next.type === 'stall' || next.type === 'streamFailure') {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
    const events = chat
      ? chatChunks({ type: 'answer', text: next.text ?? '' }, requestNo, model, false).slice(0, -1)
      : responseEvents({ type: 'answer', text: next.text ?? '' }, requestNo, model).filter(
          (e) => e.type === 'response.created' || e.type === 'response.output_text.delta',
        );
    for (const event of events) res.write(sse(event, !chat));
    if (next.type === 'stall') return; // held open; the client's abort or the server's close ends it
    if (next.message !== undefined) res.write(sse(streamFailure(chat, next.message, requestNo, model), !chat));
    res.end();
    return;
  }
  if (body?.stream !== true) {
    res.writeHead(200, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(chat ? chatCompletion(next, requestNo, model) : responseBody(next, requestNo, model)));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
  if (chat) {
    for (const chunk of chatChunks(next, requestNo, model, body.stream_options?.include_usage === true))
      res.write(sse(chunk, false));
    res.end('data: [DONE]\n\n');
  } else {
    for (const event of responseEvents(next, requestNo, model)) res.write(sse(event, true));
    res.end();
  }
}

/** How each API reports a failure inside a stream. */
function streamFailure(chat: boolean, message: string, requestNo: number, model: string): unknown {
  if (chat) return { error: { message, type: 'server_error', param: null, code: null } };
  return {
    type: 'response.failed',
    sequence_number: 99,
    response: {
      id: `resp_${requestNo}`,
      object: 'response',
      status: 'failed',
      model,
      output: [],
      error: { code: 'server_error', message },
      usage: null,
    },
  };
}

/** One server-sent event; the Responses API names each event, Chat Completions does not. */
function sse(data: unknown, named: boolean): string {
  const event = named ? `event: ${(data as { type: string }).type}\n` : '';
  return `${event}data: ${JSON.stringify(data)}\n\n`;
}
