/**
 * OpenAI wire-format bodies for the test server in `openaiServer.ts`: Chat Completions chunks and
 * Responses API stream events, shaped as https://platform.openai.com/docs/api-reference documents them.
 */

/** A tool call the scripted model makes. `arguments` may be raw text, to script malformed JSON. */
export interface ScriptedToolCall {
  id?: string;
  name: string;
  arguments: string | Record<string, unknown>;
}

/** A scripted successful answer. */
export interface ScriptedAnswer {
  type: 'answer';
  text?: string;
  /** A refusal the model streams (chat `delta.refusal`, Responses `response.refusal.delta`). */
  refusal?: string;
  toolCalls?: ScriptedToolCall[];
  /** Token counts reported (default 10 in, 5 out). */
  usage?: { inputTokens: number; outputTokens: number };
  /** Characters per streamed text delta / argument fragment (default 4). */
  chunkSize?: number;
  /** Chat only: send the tool calls' argument fragments round-robin instead of one call after another. */
  interleaveToolCalls?: boolean;
  /** Milliseconds to wait before answering (to script timeouts). */
  delayMs?: number;
}

/** What a chat answer or a responses answer is made of, after defaults. */
export interface Prepared {
  text: string;
  calls: Array<{ id: string; name: string; arguments: string }>;
  usage: { inputTokens: number; outputTokens: number };
  chunkSize: number;
}

/** An answer with defaults filled in: tool call ids `call_<request>_<index>`, arguments as JSON text, usage 10 in / 5 out. */
export function prepare(answer: ScriptedAnswer, requestNo: number): Prepared {
  return {
    text: answer.text ?? '',
    calls: (answer.toolCalls ?? []).map((call, i) => ({
      id: call.id ?? `call_${requestNo}_${i}`,
      name: call.name,
      arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
    })),
    usage: answer.usage ?? { inputTokens: 10, outputTokens: 5 },
    chunkSize: Math.max(1, answer.chunkSize ?? 4),
  };
}

/** Splits `text` into pieces of `size` characters, as a stream would deliver it. */
export function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length; at += size) out.push(text.slice(at, at + size));
  return out;
}

/** The `data:` payloads of a streamed chat completion (without the final `[DONE]`). */
export function chatChunks(answer: ScriptedAnswer, requestNo: number, model: string, includeUsage: boolean): unknown[] {
  const p = prepare(answer, requestNo);
  const base = { id: `chatcmpl-${requestNo}`, object: 'chat.completion.chunk', created: 1_700_000_000, model };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  const out: unknown[] = [chunk({ role: 'assistant', content: '' })];
  for (const piece of pieces(p.text, p.chunkSize)) out.push(chunk({ content: piece }));
  for (const piece of pieces(answer.refusal ?? '', p.chunkSize)) out.push(chunk({ refusal: piece }));
  const fragments = p.calls.map((call, index) => [
    chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }),
    ...pieces(call.arguments, p.chunkSize).map((piece) =>
      chunk({ tool_calls: [{ index, function: { arguments: piece } }] }),
    ),
  ]);
  if (answer.interleaveToolCalls) {
    for (let round = 0; fragments.some((f) => round < f.length); round += 1) {
      for (const f of fragments) if (round < f.length) out.push(f[round]);
    }
  } else {
    for (const f of fragments) out.push(...f);
  }
  out.push(chunk({}, p.calls.length > 0 ? 'tool_calls' : 'stop'));
  if (includeUsage) out.push({ ...base, choices: [], usage: chatUsage(p.usage) });
  return out;
}

/** A whole (non-streamed) chat completion. */
export function chatCompletion(answer: ScriptedAnswer, requestNo: number, model: string): unknown {
  const p = prepare(answer, requestNo);
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: p.text === '' && p.calls.length > 0 ? null : p.text,
    refusal: null,
  };
  if (p.calls.length > 0) {
    message.tool_calls = p.calls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.arguments },
    }));
  }
  return {
    id: `chatcmpl-${requestNo}`,
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: p.calls.length > 0 ? 'tool_calls' : 'stop' }],
    usage: chatUsage(p.usage),
  };
}

function chatUsage(usage: { inputTokens: number; outputTokens: number }) {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

/** The output items and final response object of a Responses API answer. */
function responseObject(p: Prepared, requestNo: number, model: string, status: 'in_progress' | 'completed') {
  const output: unknown[] = [];
  if (p.text !== '') {
    output.push({
      id: `msg_${requestNo}`,
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: p.text, annotations: [] }],
    });
  }
  for (const [i, call] of p.calls.entries()) {
    output.push({
      id: `fc_${requestNo}_${i}`,
      type: 'function_call',
      status: 'completed',
      call_id: call.id,
      name: call.name,
      arguments: call.arguments,
    });
  }
  return {
    id: `resp_${requestNo}`,
    object: 'response',
    created_at: 1_700_000_000,
    status,
    model,
    output: status === 'completed' ? output : [],
    incomplete_details: null,
    error: null,
    usage:
      status === 'completed'
        ? {
            input_tokens: p.usage.inputTokens,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: p.usage.outputTokens,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: p.usage.inputTokens + p.usage.outputTokens,
          }
        : null,
  };
}

/** A whole (non-streamed) Responses API response. */
export function responseBody(answer: ScriptedAnswer, requestNo: number, model: string): unknown {
  return responseObject(prepare(answer, requestNo), requestNo, model, 'completed');
}

/** The stream events of a Responses API answer, in order, each with its `sequence_number`. */
export function responseEvents(answer: ScriptedAnswer, requestNo: number, model: string): Array<{ type: string }> {
  const p = prepare(answer, requestNo);
  const events: Array<Record<string, unknown> & { type: string }> = [
    { type: 'response.created', response: responseObject(p, requestNo, model, 'in_progress') },
  ];
  let outputIndex = 0;
  if (p.text !== '') {
    const itemId = `msg_${requestNo}`;
    const at = { item_id: itemId, output_index: outputIndex, content_index: 0 };
    events.push({
      type: 'response.output_item.added',
      output_index: outputIndex,
      item: { id: itemId, type: 'message', status: 'in_progress', role: 'assistant', content: [] },
    });
    events.push({
      type: 'response.content_part.added',
      ...at,
      part: { type: 'output_text', text: '', annotations: [] },
    });
    for (const piece of pieces(p.text, p.chunkSize))
      events.push({ type: 'response.output_text.delta', ...at, delta: piece, logprobs: [] });
    events.push({ type: 'response.output_text.done', ...at, text: p.text, logprobs: [] });
    events.push({
      type: 'response.content_part.done',
      ...at,
      part: { type: 'output_text', text: p.text, annotations: [] },
    });
    events.push({
      type: 'response.output_item.done',
      output_index: outputIndex,
      item: {
        id: itemId,
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: p.text, annotations: [] }],
      },
    });
    outputIndex += 1;
  }
  for (const piece of pieces(answer.refusal ?? '', p.chunkSize)) {
    events.push({
      type: 'response.refusal.delta',
      item_id: `refusal_${requestNo}`,
      output_index: outputIndex,
      content_index: 0,
      delta: piece,
    });
  }
  for (const [i, call] of p.calls.entries()) {
    const itemId = `fc_${requestNo}_${i}`;
    const item = { id: itemId, type: 'function_call', call_id: call.id, name: call.name };
    events.push({
      type: 'response.output_item.added',
      output_index: outputIndex,
      item: { ...item, status: 'in_progress', arguments: '' },
    });
    for (const piece of pieces(call.arguments, p.chunkSize)) {
      events.push({
        type: 'response.function_call_arguments.delta',
        item_id: itemId,
        output_index: outputIndex,
        delta: piece,
      });
    }
    events.push({
      type: 'response.function_call_arguments.done',
      item_id: itemId,
      output_index: outputIndex,
      name: call.name,
      arguments: call.arguments,
    });
    events.push({
      type: 'response.output_item.done',
      output_index: outputIndex,
      item: { ...item, status: 'completed', arguments: call.arguments },
    });
    outputIndex += 1;
  }
  events.push({ type: 'response.completed', response: responseObject(p, requestNo, model, 'completed') });
  return events.map((event, sequence) => ({ ...event, sequence_number: sequence }));
}
