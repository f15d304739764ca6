/**
 * Assets over HTTP, on a real server on 127.0.0.1: upload a file to a session, list it, download
 * it, refer to it from a message, delete it; client mistakes get 4xx and store nothing; another
 * tenant or user never reaches it.
 */
import { createHash } from 'node:crypto';
import { type AssetRef, InMemoryStore } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { createBatonApp } from '../src/index.js';
import { serveBaton } from '../src/node.js';
import { client, TOKENS } from './support/httpClient.js';
import { serverDesk } from './support/serverDesk.js';

/** A server over the test desk whose uploads are limited to `maxAssetBytes`. */
async function assetServer(maxAssetBytes = 64 * 1024) {
  const store = new InMemoryStore();
  const { workflow } = serverDesk(store);
  const app = createBatonApp({
    workflow,
    maxAssetBytes,
    authenticate: (request) => TOKENS[request.headers.get('authorization') ?? ''],
  });
  const server = await serveBaton(app);
  return { url: server.url, store, [Symbol.asyncDispose]: () => server.close() };
}

/** What the tests upload: bytes, or a stream of them. */
type Upload = Uint8Array | ReadableStream<Uint8Array>;

const PNG = Uint8Array.from({ length: 5000 }, (_, i) => (i * 7) % 256);

function upload(
  url: string,
  path: string,
  body: Upload | undefined,
  headers: Record<string, string>,
  token = 'Bearer acme-ann',
) {
  return fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: token, ...headers },
    ...(body === undefined ? {} : { body, duplex: 'half' }),
  } as RequestInit);
}

describe('session assets over HTTP', () => {
  it('uploads, lists, downloads, sends with a message, and deletes an asset', async () => {
    await using server = await assetServer();
    const ann = client(server.url);
    await ann.json('POST', '/sessions', { id: 'as-1' });

    const created = await upload(server.url, '/sessions/as-1/assets?name=receipt%20%C3%A9t%C3%A9.png', PNG, {
      'content-type': 'image/png',
    });
    expect(created.status).toBe(201);
    const ref = (await created.json()) as AssetRef;
    expect(ref).toMatchObject({
      sessionId: 'as-1',
      name: 'receipt été.png',
      contentType: 'image/png',
      size: PNG.length,
      sha256: createHash('sha256').update(PNG).digest('hex'),
    });

    expect((await ann.json('GET', '/sessions/as-1/assets')).body).toEqual({ assets: [ref] });
    const download = await ann.call('GET', `/sessions/as-1/assets/${ref.id}`);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('image/png');
    expect(download.headers.get('content-disposition')).toContain("filename*=UTF-8''receipt%20%C3%A9t%C3%A9.png");
    expect(Buffer.from(await download.arrayBuffer()).equals(Buffer.from(PNG))).toBe(true);

    // A streamed (chunked) upload, without Content-Length.
    const chunks = [PNG.subarray(0, 2000), PNG.subarray(2000)];
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    });
    const streamed = await upload(server.url, '/sessions/as-1/assets?name=again.png', stream, {
      'content-type': 'image/png',
    });
    expect(streamed.status).toBe(201);
    expect(await streamed.json()).toMatchObject({ size: PNG.length, sha256: ref.sha256 });

    const turn = await ann.json('POST', '/sessions/as-1/messages', { text: 'Here is my receipt', assets: [ref.id] });
    expect(turn.status).toBe(200);
    const { messages } = (await ann.json('GET', '/sessions/as-1/messages')).body;
    expect(messages[0]).toMatchObject({ role: 'user', content: 'Here is my receipt', metadata: { assets: [ref] } });

    expect((await ann.call('DELETE', `/sessions/as-1/assets/${ref.id}`)).status).toBe(204);
    expect((await ann.json('GET', `/sessions/as-1/assets/${ref.id}`)).status).toBe(404);
    expect((await ann.json('DELETE', `/sessions/as-1/assets/${ref.id}`)).status).toBe(404);
  });

  it('answers client mistakes with 4xx and a named error, storing nothing', async () => {
    await using server = await assetServer(4096);
    const ann = client(server.url);
    await ann.json('POST', '/sessions', { id: 'as-2' });
    const cases: [string, Upload | undefined, Record<string, string>, number, string][] = [
      ['/sessions/as-2/assets', PNG.subarray(0, 10), { 'content-type': 'image/png' }, 400, 'INVALID_QUERY'],
      ['/sessions/as-2/assets?name=a.png', PNG.subarray(0, 10), {}, 400, 'INVALID_BODY'],
      ['/sessions/as-2/assets?name=a.png', PNG.subarray(0, 10), { 'content-type': 'not a type' }, 400, 'INVALID_INPUT'],
      [
        '/sessions/as-2/assets?name=..%2F..%2Fetc%2Fpasswd',
        PNG.subarray(0, 10),
        { 'content-type': 'text/plain' },
        400,
        'INVALID_INPUT',
      ],
      ['/sessions/as-2/assets?name=big.png', PNG, { 'content-type': 'image/png' }, 413, 'ASSET_TOO_LARGE'],
      ['/sessions/%24gt/assets?name=a.png', PNG.subarray(0, 10), { 'content-type': 'image/png' }, 400, 'INVALID_ID'],
      ['/sessions/nobody/assets?name=a.png', PNG.subarray(0, 10), { 'content-type': 'image/png' }, 404, 'NOT_FOUND'],
    ];
    for (const [path, body, headers, status, code] of cases) {
      const response = await upload(server.url, path, body, headers);
      const answer = (await response.json()) as { error: { code: string } };
      expect(response.status, `${path} ${JSON.stringify(headers)}`).toBe(status);
      expect(answer.error.code).toBe(code);
    }
    // A chunked upload past the limit is refused too.
    const endless = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 4; i += 1) controller.enqueue(PNG.subarray(0, 2000));
        controller.close();
      },
    });
    expect(
      (await upload(server.url, '/sessions/as-2/assets?name=big.png', endless, { 'content-type': 'image/png' })).status,
    ).toBe(413);
    expect((await ann.json('GET', '/sessions/as-2/assets/..%2F..')).status).toBe(400);
    const unknown = await ann.json('POST', '/sessions/as-2/messages', {
      text: 'see attached',
      assets: ['no-such-asset'],
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain('no-such-asset');
    expect((await ann.json('GET', '/sessions/as-2/assets')).body).toEqual({ assets: [] });
    expect((await ann.json('GET', '/sessions/as-2/messages')).body.messages).toEqual([]);
  });

  it("never lets another tenant or another user reach a session's assets", async () => {
    await using server = await assetServer();
    const ann = client(server.url);
    await ann.json('POST', '/sessions', { id: 'as-3' });
    const ref = (await (
      await upload(server.url, '/sessions/as-3/assets?name=a.png', PNG.subarray(0, 10), { 'content-type': 'image/png' })
    ).json()) as AssetRef;
    for (const token of ['Bearer globex-gil', 'Bearer acme-bob']) {
      const other = client(server.url, token);
      expect(
        (
          await upload(
            server.url,
            '/sessions/as-3/assets?name=b.png',
            PNG.subarray(0, 10),
            { 'content-type': 'image/png' },
            token,
          )
        ).status,
      ).toBe(404);
      expect((await other.json('GET', '/sessions/as-3/assets')).status).toBe(404);
      expect((await other.json('GET', `/sessions/as-3/assets/${ref.id}`)).status).toBe(404);
      expect((await other.json('DELETE', `/sessions/as-3/assets/${ref.id}`)).status).toBe(404);
    }
    expect((await ann.json('GET', '/sessions/as-3/assets')).body).toEqual({ assets: [ref] });
  });
});
