/**
 * The scenario on Mastra: a supervisor agent (`triage`) with `billing` as a sub-agent (Mastra delegates through an
 * `agent-billing` tool: billing answers, triage relays its answer, so a turn makes three model calls where a handoff
 * makes two), the refund tool with `requireApproval`, `Memory` on Mastra's `InMemoryStore`, registered in a `Mastra`
 * instance over the same storage (which keeps the suspended run's snapshot). Resumed with `approveToolCallGenerate`
 * on newly built agents over that storage. Memory keeps its defaults: the model sees the thread's newest messages,
 * not the whole history. The module comes from `bench/peers/current` (Mastra 1.x declares Node ≥ 22, so it is not in
 * the workspace), hence the narrow local types below instead of Mastra's own.
 */
import { z } from 'zod';
import { answerTo, deepBytes, type PeerRunner, REFUND_TEXT } from './scenario.js';

/** The parts of Mastra's API the scenario uses. */
export interface MastraModule {
  Agent: new (config: Record<string, unknown>) => MastraAgent;
  Mastra: new (config: Record<string, unknown>) => unknown;
  InMemoryStore: new () => object;
  createTool: (config: Record<string, unknown>) => unknown;
  Memory: new (config: { storage: object }) => unknown;
}

interface GenerateResult {
  text: string;
  finishReason?: string;
  runId?: string;
  suspendPayload?: { toolCallId?: string };
}

interface MastraAgent {
  generate(message: string, options: Record<string, unknown>): Promise<GenerateResult>;
  approveToolCallGenerate(options: Record<string, unknown>): Promise<GenerateResult>;
}

/** One message of the AI SDK's LanguageModelV2 prompt. */
interface PromptMessage {
  role: string;
  content: string | Array<{ type: string; text?: string; output?: { value?: unknown } }>;
}

interface Answer {
  text?: string;
  tool?: string;
  args?: Record<string, unknown>;
}

let calls = 0;

/** An AI SDK LanguageModelV2 that answers from a function of its prompt and keeps the newest prompt. */
function fakeModel(answer: (prompt: PromptMessage[]) => Answer) {
  const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
  const content = (out: Answer) =>
    out.tool === undefined
      ? [{ type: 'text', text: out.text ?? '' }]
      : [{ type: 'tool-call', toolCallId: `call_${++calls}`, toolName: out.tool, input: JSON.stringify(out.args) }];
  const model = {
    specificationVersion: 'v2',
    provider: 'fake',
    modelId: 'fake',
    supportedUrls: {},
    last: [] as PromptMessage[],
    async doGenerate(options: { prompt: PromptMessage[] }) {
      model.last = options.prompt;
      const out = answer(options.prompt);
      return { content: content(out), finishReason: out.tool ? 'tool-calls' : 'stop', usage, warnings: [] };
    },
    async doStream(options: { prompt: PromptMessage[] }) {
      const { content: parts, finishReason } = await model.doGenerate(options);
      const events: unknown[] = [{ type: 'stream-start', warnings: [] }];
      for (const part of parts) {
        if ('text' in part) {
          const [start, end] = [
            { type: 'text-start', id: 't' },
            { type: 'text-end', id: 't' },
          ];
          events.push(start, { type: 'text-delta', id: 't', delta: part.text }, end);
        } else events.push(part);
      }
      events.push({ type: 'finish', finishReason, usage });
      return { stream: ReadableStream.from(events) };
    },
  };
  return model;
}

function textOf(message: PromptMessage | undefined): string {
  if (message === undefined) return '';
  if (typeof message.content === 'string') return message.content;
  return message.content.map((part) => part.text ?? '').join('');
}

function desk(mastra: MastraModule, storage: object) {
  const refund = mastra.createTool({
    id: 'refund',
    description: 'Refunds a charge.',
    inputSchema: z.object({ orderId: z.string() }),
    requireApproval: true,
    execute: async ({ orderId }: { orderId: string }) => `refunded ${orderId}`,
  });
  const billingModel = fakeModel((prompt) => {
    const last = prompt.at(-1);
    if (last?.role === 'tool') return { text: 'Refunded.' };
    const said = textOf(prompt.findLast((m) => m.role === 'user'));
    return said === REFUND_TEXT ? { tool: 'refund', args: { orderId: '1234' } } : { text: answerTo(said) };
  });
  const billing = new mastra.Agent({
    id: 'billing',
    name: 'billing',
    description: 'Refunds, charges, invoices.',
    instructions: 'Resolve billing questions.',
    model: billingModel,
    tools: { refund },
  });
  const triageModel = fakeModel((prompt) => {
    const last = prompt.at(-1);
    if (last?.role === 'user') return { tool: 'agent-billing', args: { prompt: textOf(last) } };
    // Relay the specialist's answer (the tool result), as a handoff would have shown it.
    const result = typeof last?.content === 'string' ? undefined : last?.content[0]?.output?.value;
    return { text: typeof result === 'string' ? result : 'Anything else?' };
  });
  const triage = new mastra.Agent({
    id: 'triage',
    name: 'triage',
    instructions: 'Route the customer.',
    model: triageModel,
    agents: { billing },
    memory: new mastra.Memory({ storage }),
  });
  new mastra.Mastra({ agents: { triage, billing }, storage, logger: false });
  return { triage, billingModel };
}

const thread = { memory: { thread: 'peers-1', resource: 'customer-1' } };

/** Creates the Mastra runner (one thread in an InMemoryStore) on the Mastra module `mastra`. */
export async function mastraRunner(version: string, mastra: MastraModule): Promise<PeerRunner> {
  const storage = new mastra.InMemoryStore();
  let { triage } = desk(mastra, storage);
  let paused = { runId: '', toolCallId: '' };
  let afterRestore: PromptMessage[] = [];
  return {
    name: `Mastra ${version} (Memory on InMemoryStore, supervisor + sub-agent)`,
    async turn(text) {
      const result = await triage.generate(text, thread);
      if (result.text !== answerTo(text)) throw new Error(`Mastra answered ${JSON.stringify(result.text)}`);
    },
    async persistedBytes() {
      return deepBytes(storage);
    },
    async pauseOnApproval() {
      const result = await triage.generate(REFUND_TEXT, thread);
      const toolCallId = result.suspendPayload?.toolCallId;
      if (result.finishReason !== 'suspended' || result.runId === undefined || toolCallId === undefined)
        throw new Error('Mastra did not pause on the approval');
      paused = { runId: result.runId, toolCallId };
    },
    async restoreAndApprove() {
      const fresh = desk(mastra, storage);
      triage = fresh.triage;
      const started = performance.now();
      const result = await triage.approveToolCallGenerate({ ...paused, ...thread });
      if (result.text !== 'Refunded.') throw new Error(`Mastra resumed to ${JSON.stringify(result.text)}`);
      afterRestore = fresh.billingModel.last;
      return performance.now() - started;
    },
    inputAfterRestore: () => afterRestore.map((m) => `${m.role}:${JSON.stringify(m.content)}`),
  };
}
