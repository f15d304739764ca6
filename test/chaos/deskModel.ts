/**
 * The chaos desk's model: a deterministic function of its input. It reads the latest user message
 * and the tool results that follow it, and decides the next step of the agent it serves; tool call
 * ids are a hash of the agent, the input's length, the user marker and the call's position. So a run
 * interrupted and recovered gets the same answers, with the same ids, as an uninterrupted run — as
 * long as recovery sends the model the same input.
 */
import { createHash } from 'node:crypto';
import type { ModelClient, ModelMessage, ModelRequest, ModelStreamEvent } from '@baton/core';
import { ADDRESS_PROMPT, markersIn } from './conversationScript.js';

/** One step the model decides: text, or tool calls (name + arguments). */
interface Decision {
  text?: string;
  calls?: Array<{ name: string; arguments: Record<string, unknown> }>;
}

/**
 * A {@link ModelClient} for the agents `triage`, `billing` and `shipping` of the chaos desk.
 *
 * @example
 * ```ts
 * const triage = agent({ name: 'triage', description: 'Routes.', instructions: 'Route.', model: new DeskModel() });
 * ```
 */
export class DeskModel implements ModelClient {
  readonly model = 'chaos-desk';

  async *stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    const agent = request.agent ?? 'unknown';
    const input = request.messages.filter((m) => m.role !== 'system');
    const decision = decide(agent, input);
    if (decision.text !== undefined) {
      const half = Math.ceil(decision.text.length / 2);
      yield { type: 'text.delta', delta: decision.text.slice(0, half) };
      yield { type: 'text.delta', delta: decision.text.slice(half) };
    }
    const marker = lastUser(input)?.marker ?? '-';
    for (const [index, call] of (decision.calls ?? []).entries()) {
      const id = `call_${hash(`${agent}|${input.length}|${marker}|${call.name}|${index}`)}`;
      yield { type: 'tool_call', toolCall: { id, name: call.name, arguments: JSON.stringify(call.arguments) } };
    }
    yield {
      type: 'usage',
      usage: { inputTokens: input.length, outputTokens: 1, totalTokens: input.length + 1, requests: 1 },
    };
    yield { type: 'finish', finishReason: decision.calls ? 'tool_calls' : 'stop' };
  }
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

function lastUser(input: readonly ModelMessage[]): { index: number; marker: string } | undefined {
  for (let index = input.length - 1; index >= 0; index -= 1) {
    const message = input[index];
    if (message?.role === 'user') return { index, marker: markersIn(message.content)[0] ?? '-' };
  }
  return undefined;
}

/** Results (by tool name) of the tool calls made since the latest user message. */
function resultsSinceUser(input: readonly ModelMessage[]): Map<string, string> {
  const from = lastUser(input)?.index ?? -1;
  const results = new Map<string, string>();
  for (const message of input.slice(from + 1))
    if (message.role === 'tool' && message.toolName) results.set(message.toolName, message.content);
  return results;
}

function decide(agent: string, input: readonly ModelMessage[]): Decision {
  const user = lastUser(input);
  const results = resultsSinceUser(input);
  const last = input.at(-1);
  if (agent === 'triage') {
    if (last?.role !== 'user') return { text: 'Is there anything else I can do for you?' };
    if (user?.marker === '[u1]')
      return { calls: [{ name: 'handoff_to_billing', arguments: { reason: 'a double charge' } }] };
    if (user?.marker === '[u2]')
      return { calls: [{ name: 'handoff_to_shipping', arguments: { reason: 'a parcel question' } }] };
    return { text: 'Glad I could help. Goodbye!' };
  }
  if (agent === 'billing' && user?.marker === '[u1]') {
    if (!results.has('look_up_order')) {
      return {
        calls: [
          { name: 'look_up_order', arguments: { orderId: '1234' } },
          { name: 'look_up_charges', arguments: { orderId: '1234' } },
        ],
      };
    }
    if (!results.has('refund')) return { calls: [{ name: 'refund', arguments: { orderId: '1234', amount: 40 } }] };
    return { text: `Done: ${results.get('refund')} (${results.get('look_up_charges')})` };
  }
  if (agent === 'shipping' && user?.marker === '[u2]') {
    const address = results.get('request_user_input');
    if (address === undefined)
      return { calls: [{ name: 'request_user_input', arguments: { prompt: ADDRESS_PROMPT } }] };
    if (!results.has('track_parcel')) {
      return {
        calls: [
          { name: 'track_parcel', arguments: { orderId: '1234' } },
          { name: 'check_address', arguments: { address: address.replace(/\[[ua]\d+\]\s*/, '') } },
          { name: 'estimate_delivery', arguments: { orderId: '1234' } },
        ],
      };
    }
    return {
      text: `Your parcel: ${results.get('track_parcel')}; ${results.get('check_address')}; ${results.get('estimate_delivery')}.`,
    };
  }
  return { text: `${agent} has nothing to add.` };
}
