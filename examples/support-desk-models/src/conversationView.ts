import { createHash } from 'node:crypto';
import type { ModelMessage } from '@baton/core';
import { REQUEST_USER_INPUT } from '@baton/handoff';
import { extractSlots, type SlotValues } from './slotExtraction.js';

/** A tool call an agent made, with its result once there is one. */
export interface ViewedCall {
  id: string;
  name: string;
  agent: string | undefined;
  args: Record<string, unknown>;
  /** The tool result's text; `undefined` while unanswered. */
  result: string | undefined;
  /** Whether the result is an error (core writes error results as `Error: …`). */
  failed: boolean;
}

/** What an offline model reads out of its input: everything is derived from the messages alone. */
export interface ConversationView {
  /** What the customer said, in order: user messages and answers to `request_user_input`. */
  customerTexts: string[];
  /** Slot values the customer gave (a later value wins). */
  slots: SlotValues;
  /** Every tool call in the input, in order. */
  calls: ViewedCall[];
  /** The agents that wrote assistant messages, in order of their last message. */
  speakers: string[];
  /** For each agent that wrote, how many of `customerTexts` came before its first message. */
  heardBefore: Map<string, number>;
  /** For each agent that replied to the customer in text, how many of `customerTexts` came before its last such reply. */
  repliedAt: Map<string, number>;
  /** The last message of the input. */
  last: ModelMessage | undefined;
  /** A stable digest of the input, for deterministic tool call ids. */
  digest: string;
}

/**
 * Which slots a question asks for, by its words (works for the offline policy's questions and for
 * an LLM's alike).
 *
 * @example
 * ```ts
 * slotsAskedBy('Could I have your full name and order ID?'); // ['customer_name', 'order_id']
 * ```
 */
export function slotsAskedBy(prompt: string): string[] {
  const p = prompt.toLowerCase();
  const asked: string[] = [];
  const rules: Array<[RegExp, string]> = [
    [/\bname\b/, 'customer_name'],
    [/account id/, 'account_id'],
    [/order id/, 'order_id'],
    [/zip/, 'zip_code'],
    [/username/, 'username'],
    [/e-?mail/, 'email'],
    [/\bpin\b/, 'pin_number'],
    [/security/, 'security_answer'],
    [/how much|amount/, 'amount'],
    [/shipping status/, 'shipping_option'],
    [/membership/, 'membership_level'],
    [/phone/, 'phone'],
    [/address/, 'street_address'],
    [/payment method/, 'payment_method'],
  ];
  for (const [pattern, slot] of rules) if (pattern.test(p)) asked.push(slot);
  return asked;
}

function parseArgs(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text || '{}');
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * Reads a model input: the customer's words, the slots they hold, the tool calls and their results.
 *
 * @param messages a `ModelRequest`'s messages (system first)
 * @example
 * ```ts
 * viewConversation([{ role: 'user', content: 'I am Joyce Wu' }]).slots.customer_name; // 'Joyce Wu'
 * ```
 */
export function viewConversation(messages: readonly ModelMessage[]): ConversationView {
  const calls: ViewedCall[] = [];
  const byId = new Map<string, ViewedCall>();
  const customerTexts: string[] = [];
  const slots: SlotValues = {};
  const speakers: string[] = [];
  const heardBefore = new Map<string, number>();
  const repliedAt = new Map<string, number>();
  const hear = (text: string, asked: readonly string[]) => {
    customerTexts.push(text);
    for (const [slot, value] of Object.entries(extractSlots(text, asked))) if (value !== undefined) slots[slot] = value;
  };
  for (const message of messages) {
    if (message.role === 'user') hear(message.content, []);
    else if (message.role === 'assistant') {
      const agent = message.agent;
      if (agent !== undefined) {
        if (!heardBefore.has(agent)) heardBefore.set(agent, customerTexts.length);
        const at = speakers.indexOf(agent);
        if (at >= 0) speakers.splice(at, 1);
        speakers.push(agent);
        if ((message.toolCalls ?? []).length === 0 && message.content.trim() !== '')
          repliedAt.set(agent, customerTexts.length);
      }
      for (const call of message.toolCalls ?? []) {
        const viewed: ViewedCall = {
          id: call.id,
          name: call.name,
          agent,
          args: parseArgs(call.arguments),
          result: undefined,
          failed: false,
        };
        calls.push(viewed);
        byId.set(call.id, viewed);
      }
    } else if (message.role === 'tool' && message.toolCallId !== undefined) {
      const call = byId.get(message.toolCallId);
      if (call === undefined) continue;
      call.result = message.content;
      call.failed = message.content.startsWith('Error');
      if (call.name === REQUEST_USER_INPUT) hear(message.content, slotsAskedBy(String(call.args.prompt ?? '')));
    }
  }
  const digest = createHash('sha256')
    .update(
      JSON.stringify(
        messages.map((m) => [
          m.role,
          m.agent ?? '',
          m.content,
          m.toolCallId ?? '',
          (m.toolCalls ?? []).map((c) => c.id),
        ]),
      ),
    )
    .digest('hex')
    .slice(0, 16);
  return { customerTexts, slots, calls, speakers, heardBefore, repliedAt, last: messages.at(-1), digest };
}
