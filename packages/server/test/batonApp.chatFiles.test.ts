/**
 * The file parts of a `useChat` message (POST /sessions/:id/chat), on a real server on 127.0.0.1:
 * a data: URL becomes an asset of the session, a URL of the session's asset route is that asset,
 * and the message keeps them as its assets; any other URL, a malformed data: URL, a file too large
 * or a missing asset is a 4xx that stores nothing.
 */
import { type AssetRef, InMemoryStore } from '@baton/core';
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { createBatonApp } from '../src/index.js';
import { serveBaton } from '../src/node.js';
import { client, TOKENS } from './support/httpClient.js';
import { serverDesk } from './support/serverDesk.js';

async function chatServer(maxAssetBytes = 64 * 1024) {
  const { workflow } = serverDesk(new InMemoryStore());
  const app = createBatonApp({
    workflow,
    maxAssetBytes,
    authenticate: (request) => TOKENS[request.headers.get('authorization') ?? ''],
  });
  const server = await serveBaton(app);
  return { url: server.url, [Symbol.asyncDispose]: () => server.close() };
}

const PNG = Uint8Array.from({ length: 5000 }, (_, i) => (i * 7) % 256);
const dataUrl = (bytes: Uint8Array, type = 'image/png') =>
  `data:${type};base64,${Buffer.from(bytes).toString('base64')}`;

/** Sends a user message with `parts` the way `useChat` does (the `ai` package's own transport) and reads the answer. */
async function useChatTurn(url: string, sessionId: string, parts: UIMessage['parts']) {
  const transport = new DefaultChatTransport<UIMessage>({
    api: `${url}/sessions/${sessionId}/chat`,
    headers: { authorization: 'Bearer acme-ann' },
  });
  const stream = await transport.sendMessages({
    trigger: 'submit-message',
    chatId: sessionId,
    messageId: undefined,
    messages: [{ id: 'u-0', role: 'user', parts }],
    abortSignal: undefined,
  });
  for await (const _ of readUIMessageStream<UIMessage>({ stream })) {
    // read to the end
  }
}

const chatBody = (parts: unknown[]) => ({ id: 'c', messages: [{ id: 'u', role: 'user', parts }] });

describe('file parts of a useChat message (POST /sessions/:id/chat)', () => {
  it('stores a data: URL as an asset, refers to an uploaded one by its URL, keeps both on the message', async () => {
    await using server = await chatServer();
    const ann = client(server.url);
    await ann.json('POST', '/sessions', { id: 'cf-1' });
    const uploaded = (await (
      await ann.call('POST', '/sessions/cf-1/assets?name=earlier.txt', 'earlier', { 'content-type': 'text/plain' })
    ).json()) as AssetRef;

    await useChatTurn(server.url, 'cf-1', [
      { type: 'text', text: 'Here is my receipt' },
      { type: 'file', mediaType: 'image/png', filename: 'receipt.png', url: dataUrl(PNG) },
      { type: 'file', mediaType: 'text/plain', url: `/sessions/cf-1/assets/${uploaded.id}` },
      { type: 'file', mediaType: 'text/plain', url: `${server.url}/sessions/cf-1/assets/${uploaded.id}` },
    ]);

    const { assets } = (await ann.json('GET', '/sessions/cf-1/assets')).body as { assets: AssetRef[] };
    expect(assets).toHaveLength(2);
    const receipt = assets.find((ref) => ref.id !== uploaded.id)!;
    expect(receipt).toMatchObject({ sessionId: 'cf-1', name: 'receipt.png', contentType: 'image/png', size: 5000 });
    const { messages } = (await ann.json('GET', '/sessions/cf-1/messages')).body;
    expect(messages[0]).toMatchObject({
      role: 'user',
      content: 'Here is my receipt',
      metadata: { assets: [receipt, uploaded, uploaded] },
    });
    const download = await ann.call('GET', `/sessions/cf-1/assets/${receipt.id}`);
    expect(download.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await download.arrayBuffer()).equals(Buffer.from(PNG))).toBe(true);
  });

  it('answers a foreign URL, a bad or too large file, or a missing asset with a 4xx, storing nothing', async () => {
    await using server = await chatServer(4096);
    const ann = client(server.url);
    await ann.json('POST', '/sessions', { id: 'cf-2' });
    await ann.json('POST', '/sessions', { id: 'cf-other' });
    const text = { type: 'text', text: 'see attached' };
    const good = { type: 'file', mediaType: 'image/png', filename: 'ok.png', url: dataUrl(PNG.subarray(0, 10)) };
    const cases: [unknown, number, string, string][] = [
      [
        { type: 'file', mediaType: 'image/png', url: 'https://example.com/a.png' },
        400,
        'UNSUPPORTED_FILE_URL',
        'parts[2]',
      ],
      [{ type: 'file', mediaType: 'image/png', url: 'ftp://127.0.0.1/a.png' }, 400, 'UNSUPPORTED_FILE_URL', 'ftp://'],
      [
        { type: 'file', mediaType: 'image/png', url: '/sessions/cf-other/assets/x' },
        400,
        'UNSUPPORTED_FILE_URL',
        'parts[2]',
      ],
      [{ type: 'file', mediaType: 'image/png', url: 'data:image/png;base64,%%%' }, 400, 'INVALID_FILE_URL', 'data:'],
      [{ type: 'file', mediaType: 'image/png', url: dataUrl(PNG) }, 413, 'ASSET_TOO_LARGE', '4096'],
      [
        { type: 'file', mediaType: 'image/png', url: '/sessions/cf-2/assets/no-such-asset' },
        404,
        'NOT_FOUND',
        'no-such-asset',
      ],
      [{ type: 'file', mediaType: 'image/png' }, 400, 'INVALID_BODY', 'parts.2.url'],
    ];
    for (const [part, status, code, named] of cases) {
      const answer = await ann.json('POST', '/sessions/cf-2/chat', chatBody([text, good, part]));
      expect(answer.status, JSON.stringify(part)).toBe(status);
      expect(answer.body.error.code).toBe(code);
      expect(answer.body.error.message).toContain(named);
    }
    // Text is still required, files or not.
    expect((await ann.json('POST', '/sessions/cf-2/chat', chatBody([good]))).status).toBe(400);
    expect((await ann.json('GET', '/sessions/cf-2/assets')).body).toEqual({ assets: [] });
    expect((await ann.json('GET', '/sessions/cf-2/messages')).body.messages).toEqual([]);
  });

  it('takes back the file it stored when the session refuses the message (a request waits)', async () => {
    await using server = await chatServer();
    const ann = client(server.url);
    await ann.json('POST', '/sessions', { id: 'cf-3' });
    await useChatTurn(server.url, 'cf-3', [{ type: 'text', text: 'I was charged twice' }]);
    const refused = await ann.json(
      'POST',
      '/sessions/cf-3/chat',
      chatBody([
        { type: 'text', text: 'and this' },
        { type: 'file', mediaType: 'image/png', url: dataUrl(PNG) },
      ]),
    );
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('/requests/');
    expect((await ann.json('GET', '/sessions/cf-3/assets')).body).toEqual({ assets: [] });
  });
});
