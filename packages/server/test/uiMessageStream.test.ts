import { DefaultChatTransport, readUIMessageStream, type UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { startDeskServer } from './support/fixture.js';
import { client } from './support/httpClient.js';

/** Sends `text` the way `useChat` does (the `ai` package's own transport over real HTTP) and reads the answer as `useChat` would. */
async function useChatTurn(url: string, sessionId: string, history: UIMessage[], text: string) {
  const transport = new DefaultChatTransport<UIMessage>({
    api: `${url}/sessions/${sessionId}/chat`,
    headers: { authorization: 'Bearer acme-ann' },
  });
  const messages: UIMessage[] = [
    ...history,
    { id: `u-${history.length}`, role: 'user', parts: [{ type: 'text', text }] },
  ];
  const stream = await transport.sendMessages({
    trigger: 'submit-message',
    chatId: sessionId,
    messageId: undefined,
    messages,
    abortSignal: undefined,
  });
  const errors: unknown[] = [];
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream<UIMessage>({ stream, onError: (error) => errors.push(error) }))
    last = message;
  return { message: last!, errors, messages };
}

describe('the Vercel AI SDK UI message stream protocol (POST /sessions/:id/chat)', () => {
  it("useChat's transport reads a turn as one assistant message: streamed text, tool parts, handoff and request data parts", async () => {
    const server = await startDeskServer();
    try {
      await client(server.url).json('POST', '/sessions', { id: 'ui-1' });
      const first = await useChatTurn(server.url, 'ui-1', [], 'I was charged twice');
      expect(first.errors).toEqual([]);
      expect(first.message.role).toBe('assistant');
      const types = first.message.parts.map((p) => p.type);
      expect(types).toContain('data-handoff');
      expect(first.message.parts.find((p) => p.type === 'data-handoff')).toMatchObject({
        data: { from: 'triage', to: 'billing', reason: 'a refund' },
      });
      expect(
        first.message.parts.find((p) => p.type === 'dynamic-tool' && p.toolName === 'handoff_to_billing'),
      ).toMatchObject({ state: 'output-available', output: 'Transferred to billing.' });
      const request = first.message.parts.find((p) => p.type === 'data-request') as
        | { data: { type: string; prompt: string } }
        | undefined;
      expect(request?.data).toMatchObject({ type: 'user_input', prompt: 'What is your order number?' });

      const second = await useChatTurn(server.url, 'ui-1', [...first.messages, first.message], '1234');
      expect(second.errors).toEqual([]);
      expect(
        second.message.parts.find((p) => p.type === 'dynamic-tool' && p.toolName === 'request_user_input'),
      ).toMatchObject({ state: 'output-available', input: null, output: '1234' });
      const text = second.message.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text);
      expect(text).toEqual(['Let me refund that.']);
      expect(second.message.parts.find((p) => p.type === 'dynamic-tool' && p.toolName === 'refund')).toMatchObject({
        input: { orderId: '1234', amount: 40 },
      });
      expect(second.message.parts.find((p) => p.type === 'data-request')).toMatchObject({
        data: { type: 'tool_approval', toolName: 'refund' },
      });
      expect(second.message.parts.at(-1)).toMatchObject({
        type: 'data-turn-completed',
        data: { nextAgent: 'billing' },
      });
    } finally {
      await server.close();
    }
  });

  it('answers with the protocol header, and a body whose last message is not the user’s is a 400 naming the field', async () => {
    const server = await startDeskServer();
    try {
      const ann = client(server.url);
      await ann.json('POST', '/sessions', { id: 'ui-2' });
      const response = await ann.call('POST', '/sessions/ui-2/chat', {
        messages: [{ id: 'm', role: 'user', parts: [{ type: 'text', text: 'hi' }] }],
      });
      expect(response.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
      const body = await response.text();
      expect(body.trimEnd().endsWith('data: [DONE]')).toBe(true);
      const bad = await ann.json('POST', '/sessions/ui-2/chat', {
        messages: [{ id: 'm', role: 'assistant', parts: [{ type: 'text', text: 'hi' }] }],
      });
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toContain('messages.0.role');
      const empty = await ann.json('POST', '/sessions/ui-2/chat', { messages: [] });
      expect(empty.status).toBe(400);
      expect(empty.body.error.message).toContain('messages');
    } finally {
      await server.close();
    }
  });
});
