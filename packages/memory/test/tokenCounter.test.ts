import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONTEXT_LABEL_TOKENS, encodingForModel, TokenCounter, type TokenEncoding } from '../src/index.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const script = fileURLToPath(new URL('./support/loadedEncodings.ts', import.meta.url));

describe('encodingForModel', () => {
  it('picks o200k_base for the GPT-4o, GPT-4.1, GPT-5 and o-series families and cl100k_base for older models', () => {
    for (const model of [
      'gpt-4o',
      'gpt-4o-mini-2024-07-18',
      'gpt-4.1-mini',
      'gpt-5',
      'o3-mini',
      'gpt-4.1-some-future-snapshot',
      'llama-3.1-70b',
    ]) {
      expect(encodingForModel(model), model).toBe('o200k_base');
    }
    for (const model of ['gpt-4', 'gpt-4-turbo', 'gpt-3.5-turbo', 'gpt-4-0613-custom', 'text-embedding-3-small']) {
      expect(encodingForModel(model), model).toBe('cl100k_base');
    }
    expect(encodingForModel(undefined)).toBe('o200k_base');
  });
});

describe('TokenCounter', () => {
  it('counts text with the BPE encoding of the model', () => {
    // "tiktoken is great!" is 6 tokens in cl100k_base (OpenAI cookbook, "How to count tokens with tiktoken").
    expect(new TokenCounter({ model: 'gpt-4' }).countText('tiktoken is great!')).toBe(6);
    // Cyrillic shows the two encodings apart: o200k_base has a much larger multilingual vocabulary.
    const text = 'Здравствуйте, мир';
    expect(new TokenCounter({ model: 'gpt-4o' }).countText(text)).toBeLessThan(
      new TokenCounter({ model: 'gpt-4' }).countText(text),
    );
    // Special-token text in user content is counted as plain text, not rejected.
    expect(new TokenCounter().countText('<|endoftext|>')).toBe(7);
  });

  it('adds the chat overhead of the cookbook: 3 per message and 3 to prime the reply', () => {
    const counter = new TokenCounter({ encoding: 'o200k_base' });
    const hello = counter.countText('hello world');
    const user = counter.countText('user');
    expect(counter.countMessages([{ role: 'user', content: 'hello world' }])).toBe(3 + user + hello + 3);
    expect(counter.countMessages([])).toBe(0);
  });

  it('counts tool calls, tool call ids and the label of context messages', () => {
    const counter = new TokenCounter();
    const call = { id: 'call_1', name: 'look_up_order', arguments: '{"orderId":"1234"}' };
    const plain = counter.countMessage({ role: 'assistant', content: '' });
    const withCall = counter.countMessage({ role: 'assistant', content: '', toolCalls: [call] });
    expect(withCall - plain).toBe(
      4 + counter.countText(call.id) + counter.countText(call.name) + counter.countText(call.arguments),
    );
    expect(
      counter.countMessage({ role: 'context', content: 'x' }) - counter.countMessage({ role: 'system', content: 'x' }),
    ).toBe(CONTEXT_LABEL_TOKENS);
    expect(counter.countMessage({ role: 'tool', content: 'ok', toolCallId: 'call_1' })).toBe(
      3 + counter.countText('tool') + 1 + counter.countText('call_1'),
    );
  });

  it('truncates text to a token limit', () => {
    const counter = new TokenCounter();
    const text = 'one two three four five six seven eight nine ten';
    const cut = counter.truncate(text, 4);
    expect(counter.countText(cut)).toBe(4);
    expect(text.startsWith(cut)).toBe(true);
    expect(counter.truncate('short', 10)).toBe('short');
  });
});

describe('TokenCounter: encodings load on first use', () => {
  /** What support/loadedEncodings.ts prints in a new process for a counter of `encoding`. */
  function loadedIn(encoding: TokenEncoding): { atImport: string[]; afterCounter: string[]; tokens: number } {
    const out = execFileSync(process.execPath, ['--conditions=source', '--import', 'tsx', script, encoding], {
      cwd: repoRoot,
      encoding: 'utf8',
    });
    return JSON.parse(out.trim().split('\n').at(-1)!);
  }

  it('loads no rank table at import and only the counter’s own encoding after (o200k_base ≈ 20 MB of heap, cl100k_base ≈ 10 MB)', () => {
    expect(loadedIn('o200k_base')).toEqual({ atImport: [], afterCounter: ['o200k_base'], tokens: 4 });
    expect(loadedIn('cl100k_base')).toEqual({ atImport: [], afterCounter: ['cl100k_base'], tokens: 4 });
  });
});
