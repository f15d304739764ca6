/**
 * A real HTTP server on 127.0.0.1 speaking Anthropic's Messages API (`POST /v1/messages` with
 * `stream: true`, answered as server-sent events: `message_start`, `content_block_start` /
 * `content_block_delta` (`text_delta`, `input_json_delta`) / `content_block_stop`, `message_delta`,
 * `message_stop`; errors as `{ type: 'error', error: { type, message } }` with a `request-id`
 * header). Wire format: https://docs.anthropic.com/en/api/messages-streaming. Each request takes
 * the next scripted answer, or asks `respond` for one.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A scripted answer: text and/or tool calls (`input` as an object, streamed as JSON fragments). */
export interface AnthropicAnswer {
  text?: string;
  toolCalls?: Array<{ id?: string; name: string; input: Record<string, unknown> }>;
  usage?: { input: number; output: number };
}

/** A scripted HTTP error with Anthropic's error body. */
export interface AnthropicError {
  status: number;
  /** e.g. `'rate_limit_error'`, `'authentication_error'`. */
  errorType: string;
  message: string;
}

/** A request as the server received it (`body` parsed). */
export interface RecordedAnthropicRequest {
  path: string;
  headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary wire fields
  body: any;
}

/** A running server; dispose it with `await using`. */
export interface AnthropicServer extends AsyncDisposable {
  /** e.g. `http://127.0.0.1:41234/v1`, for `createAnthropic({ baseURL })`. */
  baseURL: string;
  requests: RecordedAnthropicRequest[];
  enqueue(...answers: Array<AnthropicAnswer | AnthropicError>): void;
  close(): Promise<void>;
}

/**
 * Starts the server.
 * @param respond answers a request when the queue is empty (e.g. from what the request holds)
 */
export async function startAnthropicServer(
  respond?: (request: RecordedAnthropicRequest, index: number) => AnthropicAnswer | AnthropicError,
): Promise<AnthropicServer> {
  const queue: Array<AnthropicAnswer | AnthropicError> = [];
  const requests: RecordedAnthropicRequest[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => {
      raw += chunk;
    });
    req.on('end', () => {
      const recorded: RecordedAnthropicRequest = {
        path: req.url ?? '',
        headers: req.headers,
        body: JSON.parse(raw || '{}'),
      };
      requests.push(recorded);
      const answer = queue.shift() ?? respond?.(recorded, requests.length - 1) ?? { text: 'Out of script.' };
      if ('status' in answer) {
        res.writeHead(answer.status, { 'content-type': 'application/json', 'request-id': `req_${requests.length}` });
        res.end(JSON.stringify({ type: 'error', error: { type: answer.errorType, message: answer.message } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'request-id': `req_${requests.length}` });
      for (const [event, data] of answerEvents(answer, recorded.body.model, requests.length))
        res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return { baseURL, requests, enqueue: (...answers) => queue.push(...answers), close, [Symbol.asyncDispose]: close };
}

/** The server-sent events of one answer, in the order the Messages API sends them. */
function answerEvents(answer: AnthropicAnswer, model: string, requestNo: number): Array<[string, unknown]> {
  const usage = answer.usage ?? { input: 20, output: 8 };
  const calls = answer.toolCalls ?? [];
  const events: Array<[string, unknown]> = [
    [
      'message_start',
      {
        type: 'message_start',
        message: {
          id: `msg_${requestNo}`,
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: usage.input, output_tokens: 1 },
        },
      },
    ],
  ];
  let index = 0;
  if (answer.text !== undefined && answer.text !== '') {
    events.push([
      'content_block_start',
      { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
    ]);
    for (const piece of answer.text.match(/.{1,5}/gs) ?? [])
      events.push([
        'content_block_delta',
        { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } },
      ]);
    events.push(['content_block_stop', { type: 'content_block_stop', index }]);
    index += 1;
  }
  calls.forEach((call, i) => {
    const json = JSON.stringify(call.input);
    events.push([
      'content_block_start',
      {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: call.id ?? `toolu_${requestNo}_${i}`, name: call.name, input: {} },
      },
    ]);
    for (const piece of json.match(/.{1,7}/gs) ?? [])
      events.push([
        'content_block_delta',
        { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } },
      ]);
    events.push(['content_block_stop', { type: 'content_block_stop', index }]);
    index += 1;
  });
  events.push([
    'message_delta',
    {
      type: 'message_delta',
      delta: { stop_reason: calls.length > 0 ? 'tool_use' : 'end_turn', stop_sequence: null },
      usage: { output_tokens: usage.output },
    },
  ]);
  events.push(['message_stop', { type: 'message_stop' }]);
  return events;
}
