/**
 * The scenario on LangGraph JS: a langgraph-swarm of two prebuilt ReAct agents with a handoff tool,
 * the refund tool pausing with `interrupt()`, a MemorySaver checkpointer; resumed with
 * `Command({ resume })` on a newly compiled graph over the same saver.
 */
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { tool } from '@langchain/core/tools';
import { Command, interrupt, MemorySaver } from '@langchain/langgraph';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { createHandoffTool, createSwarm } from '@langchain/langgraph-swarm';
import { z } from 'zod';
import { answerTo, deepBytes, type PeerRunner, REFUND_TEXT } from './scenario.js';

let calls = 0;

/** A chat model that answers from a function of its input and keeps the newest input. */
class FakeChatModel extends BaseChatModel {
  last: BaseMessage[] = [];
  constructor(readonly answer: (messages: BaseMessage[]) => AIMessage) {
    super({});
  }
  _llmType(): string {
    return 'fake';
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.last = messages;
    const message = this.answer(messages);
    return { generations: [{ message, text: typeof message.content === 'string' ? message.content : '' }] };
  }
  override bindTools(): this {
    return this;
  }
}

function call(name: string, args: Record<string, unknown>): AIMessage {
  return new AIMessage({ content: '', tool_calls: [{ id: `call_${++calls}`, name, args, type: 'tool_call' }] });
}

function lastHumanText(messages: BaseMessage[]): string {
  const found = messages.findLast((m) => m.getType() === 'human');
  return typeof found?.content === 'string' ? found.content : '';
}

function graph(saver: MemorySaver) {
  const refund = tool(
    async ({ orderId }) => {
      const answer = interrupt({ action: 'refund', orderId }) as { approved: boolean };
      return answer.approved ? `refunded ${orderId}` : 'refund refused';
    },
    { name: 'refund', description: 'Refunds a charge.', schema: z.object({ orderId: z.string() }) },
  );
  const triageModel = new FakeChatModel((messages) =>
    messages.at(-1)?.getType() === 'human' ? call('transfer_to_billing', {}) : new AIMessage('Anything else?'),
  );
  const billingModel = new FakeChatModel((messages) => {
    const last = messages.at(-1);
    if (last?.getType() === 'tool' && last.name === 'refund') return new AIMessage('Refunded.');
    const said = lastHumanText(messages);
    return said === REFUND_TEXT ? call('refund', { orderId: '1234' }) : new AIMessage(answerTo(said));
  });
  const triage = createReactAgent({
    llm: triageModel,
    tools: [createHandoffTool({ agentName: 'billing' })],
    name: 'triage',
    prompt: 'Route the customer.',
  });
  const billing = createReactAgent({
    llm: billingModel,
    tools: [refund],
    name: 'billing',
    prompt: 'Resolve billing questions.',
  });
  const app = createSwarm({ agents: [triage, billing], defaultActiveAgent: 'triage' }).compile({ checkpointer: saver });
  return { app, billingModel };
}

const config = { configurable: { thread_id: 'peers-1' } };

/** Creates the LangGraph JS runner (one thread in a MemorySaver). */
export async function langgraphRunner(version: string): Promise<PeerRunner> {
  const saver = new MemorySaver();
  let { app } = graph(saver);
  let afterRestore: BaseMessage[] = [];
  return {
    name: `LangGraph JS ${version} (MemorySaver)`,
    async turn(text) {
      // Every turn starts at the coordinator, as in the other frameworks (a swarm otherwise stays with the last agent).
      await app.invoke({ messages: [{ role: 'user', content: text }], activeAgent: 'triage' }, config);
    },
    async persistedBytes() {
      return deepBytes({ storage: saver.storage, writes: saver.writes });
    },
    async pauseOnApproval() {
      const result = (await app.invoke(
        { messages: [{ role: 'user', content: REFUND_TEXT }], activeAgent: 'triage' },
        config,
      )) as { __interrupt__?: unknown[] };
      if ((result.__interrupt__?.length ?? 0) !== 1) throw new Error('LangGraph did not pause on the approval');
    },
    async restoreAndApprove() {
      const fresh = graph(saver);
      app = fresh.app;
      const started = performance.now();
      await app.invoke(new Command({ resume: { approved: true } }), config);
      afterRestore = fresh.billingModel.last;
      return performance.now() - started;
    },
    inputAfterRestore: () =>
      afterRestore.map((m) => {
        const toolCalls = (m as AIMessage).tool_calls?.map((c) => c.id).join(',') ?? '';
        const toolCallId = (m as { tool_call_id?: string }).tool_call_id ?? '';
        return `${m.getType()}:${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}:${toolCalls}:${toolCallId}`;
      }),
  };
}
