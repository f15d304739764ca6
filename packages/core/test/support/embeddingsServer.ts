import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A scripted failure of the next request: an HTTP error with OpenAI's error body, or a malformed answer. */
export type EmbeddingsFailure =
  | { type: 'error'; status: number; message: string; headers?: Record<string, string> }
  /** Answers 200 with one vector fewer than asked for. */
  | { type: 'short' };

/** A request as the server received it; `body` is the parsed JSON body. */
export interface RecordedEmbeddingsRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary wire fields
  body: any;
}

/** A running fixture server. Dispose it with `await using` or `close()`. */
export interface EmbeddingsServer extends AsyncDisposable {
  /** e.g. `http://127.0.0.1:41234/v1`, for the `baseURL` option. */
  baseURL: string;
  requests: RecordedEmbeddingsRequest[];
  /** Makes the next requests fail, in order. */
  fail(...failures: EmbeddingsFailure[]): void;
  close(): Promise<void>;
}

/**
 * The vector the server gives a text: words hashed into `dimensions` buckets (a bag of words),
 * L2-normalised. Texts sharing words get similar vectors, so cosine ranking behaves like a real
 * embedding model's for tests.
 */
export function fixtureVector(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    let hash = 2166136261;
    for (const char of word) hash = Math.imul(hash ^ char.charCodeAt(0), 16777619) >>> 0;
    vector[hash % dimensions]! += 1;
  }
  const norm = Math.hypot(...vector) || 1;
  return vector.map((v) => v / norm);
}

/**
 * Starts an HTTP server on 127.0.0.1 (a free port) speaking OpenAI's embeddings wire format:
 * `POST /v1/embeddings` with `{ model, input, dimensions?, encoding_format? }` answered by
 * `{ object: 'list', data: [{ object: 'embedding', index, embedding }], model, usage }`. Vectors are
 * {@link fixtureVector}s (64 dimensions unless the request asks for `dimensions`); data come back in
 * reverse order so that clients must sort by `index`.
 */
export async function startEmbeddingsServer(): Promise<EmbeddingsServer> {
  const failures: EmbeddingsFailure[] = [];
  const requests: RecordedEmbeddingsRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0] ?? '';
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = undefined;
      }
      requests.push({ method: req.method ?? '', path, headers: req.headers, body });
      const id = `req_${requests.length}`;
      if (req.method !== 'POST' || path !== '/v1/embeddings')
        return sendError(res, id, 404, `The fixture serves POST /v1/embeddings, not ${req.method} ${path}.`);
      const failure = failures.shift();
      if (failure?.type === 'error') return sendError(res, id, failure.status, failure.message, failure.headers);
      const { input, model, dimensions } = (body ?? {}) as { input?: unknown; model?: string; dimensions?: number };
      const texts = typeof input === 'string' ? [input] : input;
      if (!Array.isArray(texts) || texts.some((t) => typeof t !== 'string' || t === '')) {
        return sendError(
          res,
          id,
          400,
          "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.",
        );
      }
      const size = dimensions ?? 64;
      const data = texts
        .map((text, index) => ({ object: 'embedding', index, embedding: fixtureVector(text, size) }))
        .reverse();
      if (failure?.type === 'short') data.pop();
      const tokens = texts.reduce((sum, t) => sum + t.split(/\s+/).length, 0);
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': id });
      res.end(JSON.stringify({ object: 'list', data, model, usage: { prompt_tokens: tokens, total_tokens: tokens } }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const close = async (): Promise<void> => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    fail: (...more) => {
      failures.push(...more);
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

function sendError(
  res: ServerResponse,
  requestId: string,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': requestId, ...headers });
  res.end(JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code: null } }));
}
