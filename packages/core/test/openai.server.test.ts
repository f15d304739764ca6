import { describe, expect, it } from 'vitest';
import { reply, startOpenAIServer } from './support/openaiServer.js';

/** The fixture itself: tests elsewhere trust what it says, so check it here. */
describe('startOpenAIServer (test fixture)', () => {
  it('answers non-streamed chat and responses requests with JSON bodies', async () => {
    await using server = await startOpenAIServer();
    server.enqueue(reply.text('plain'), reply.toolCalls([{ id: 'c1', name: 'f', arguments: { a: 1 } }]));
    const post = (path: string, body: unknown) =>
      fetch(`${server.baseURL}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const chat = (await (await post('/chat/completions', { model: 'm', messages: [] })).json()) as {
      choices: Array<{ message: unknown }>;
    };
    const responses = (await (await post('/responses', { model: 'm', input: [] })).json()) as { output: unknown[] };
    expect(chat.choices[0]?.message).toMatchObject({ role: 'assistant', content: 'plain' });
    expect(responses.output[0]).toMatchObject({
      type: 'function_call',
      call_id: 'c1',
      name: 'f',
      arguments: '{"a":1}',
    });
    expect(server.requests.map((r) => r.body.model)).toEqual(['m', 'm']);
  });

  it('answers 400 naming the request when no reply is queued, and 404 for other paths', async () => {
    await using server = await startOpenAIServer();
    const missing = await fetch(`${server.baseURL}/chat/completions`, { method: 'POST', body: '{}' });
    const other = await fetch(`${server.baseURL}/embeddings`, { method: 'POST', body: '{}' });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { error: { message: string } }).error.message).toContain(
      'no scripted reply for request #1',
    );
    expect(other.status).toBe(404);
    expect(server.pendingReplies).toBe(0);
  });

  it('stops listening when disposed', async () => {
    let baseURL = '';
    {
      await using server = await startOpenAIServer();
      baseURL = server.baseURL;
    }
    await expect(fetch(`${baseURL}/responses`, { method: 'POST', body: '{}' })).rejects.toThrow();
  });
});
