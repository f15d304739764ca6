/**
 * The scenario on OpenAI Agents JS: two Agents, a handoff, a tool with `needsApproval`, a MemorySession; the paused
 * run is kept as `RunState.toString()`. The SDK module is passed in, so one runner serves the release installed in
 * the workspace and the current release installed in `bench/peers/current` (same API for everything used here).
 */
import type * as Sdk from '@openai/agents';
import type { AgentInputItem, Model, ModelRequest, ModelResponse } from '@openai/agents';
import { z } from 'zod';
import { answerTo, deepBytes, type PeerRunner, REFUND_TEXT } from './scenario.js';

type Item = AgentInputItem & Record<string, unknown>;

let calls = 0;
const callId = () => `call_${++calls}`;

/** A Model that answers from a function of its input and keeps the newest input. */
class FakeModel implements Model {
  last: Item[] = [];
  constructor(
    readonly sdk: typeof Sdk,
    readonly answer: (items: Item[]) => ModelResponse['output'],
  ) {}
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const items = (
      typeof request.input === 'string' ? [{ role: 'user', content: request.input }] : request.input
    ) as Item[];
    this.last = items;
    return { usage: new this.sdk.Usage(), output: this.answer(items), responseId: `resp_${calls}` };
  }
  // biome-ignore lint/correctness/useYield: the bench runs non-streamed only
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('the bench runs without streaming');
  }
}

function text(content: string): ModelResponse['output'] {
  return [
    { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: content }] },
  ];
}

function call(name: string, args: Record<string, unknown>): ModelResponse['output'] {
  return [{ type: 'function_call', callId: callId(), name, arguments: JSON.stringify(args), status: 'completed' }];
}

function userText(item: Item | undefined): string | undefined {
  if (item?.role !== 'user') return undefined;
  const content = item.content as unknown;
  if (typeof content === 'string') return content;
  return (content as Array<{ text?: string }>).map((c) => c.text ?? '').join('');
}

function agents(sdk: typeof Sdk) {
  const { Agent, tool } = sdk;
  const refund = tool({
    name: 'refund',
    description: 'Refunds a charge.',
    parameters: z.object({ orderId: z.string() }),
    needsApproval: true,
    execute: async ({ orderId }) => `refunded ${orderId}`,
  });
  const billingModel = new FakeModel(sdk, (items) => {
    const last = items.at(-1);
    if (last?.type === 'function_call_result' && last.name === 'refund') return text('Refunded.');
    const said = items.map(userText).findLast((t) => t !== undefined) ?? '';
    return said === REFUND_TEXT ? call('refund', { orderId: '1234' }) : text(answerTo(said));
  });
  const billing = new Agent({
    name: 'billing',
    instructions: 'Resolve billing questions.',
    model: billingModel,
    tools: [refund],
  });
  const triageModel = new FakeModel(sdk, (items) =>
    userText(items.at(-1)) !== undefined ? call('transfer_to_billing', {}) : text('Anything else?'),
  );
  const triage = new Agent({
    name: 'triage',
    instructions: 'Route the customer.',
    model: triageModel,
    handoffs: [billing],
  });
  return { triage, billingModel };
}

/** Creates the OpenAI Agents JS runner (one MemorySession) on the SDK module `sdk`. */
export async function openaiAgentsRunner(version: string, sdk: typeof Sdk): Promise<PeerRunner> {
  const { MemorySession, RunState, run } = sdk;
  sdk.setTracingDisabled(true);
  const session = new MemorySession({ sessionId: 'peers-1' });
  let { triage } = agents(sdk);
  let saved = '';
  let afterRestore: Item[] = [];
  return {
    name: `OpenAI Agents JS ${version} (MemorySession)`,
    async turn(message) {
      await run(triage, message, { session });
    },
    async persistedBytes() {
      return deepBytes(JSON.stringify(await session.getItems())) + Buffer.byteLength(saved);
    },
    async pauseOnApproval() {
      const result = await run(triage, REFUND_TEXT, { session });
      if (result.interruptions.length !== 1) throw new Error('OpenAI Agents did not pause on the approval');
      saved = result.state.toString();
    },
    async restoreAndApprove() {
      const fresh = agents(sdk);
      triage = fresh.triage;
      const started = performance.now();
      const state = await RunState.fromString(triage, saved);
      for (const interruption of state.getInterruptions()) state.approve(interruption);
      await run(triage, state, { session });
      afterRestore = fresh.billingModel.last;
      return performance.now() - started;
    },
    inputAfterRestore: () =>
      afterRestore.map((item) => {
        if (typeof item.callId === 'string') return `${String(item.type)}:${item.callId}`;
        return `${String(item.role)}:${JSON.stringify(item.content)}`;
      }),
  };
}
