/**
 * Tokens on the wire: replays the support desk's demo conversations with every agent on
 * OpenAIChatModel against a Chat Completions server on 127.0.0.1 that records each request body.
 * The answers the server streams back are the ones the offline desk models choose for the same
 * request, so the conversations run as in `pnpm start`, and the bodies are exactly what
 * OpenAIChatModel sends. Prints, counted with the tokenizer @baton/memory uses (o200k_base):
 *
 * - input tokens per model call and per conversation,
 * - the stable-prefix share: for each request, the tokens of its longest run of leading messages
 *   (after the tools) equal to the previous request's in the same session, over its input tokens —
 *   what a provider's prompt cache can reuse; requests whose tools or first message changed (another
 *   agent) are counted as 0.
 *
 * The replay runs twice: each conversation from a new customer, and the same conversations from a
 * few returning customers, whose earlier conversations episodic memory recalls into every turn.
 *
 * Run: pnpm bench:tokens [--conversations 40] [--customers 8]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ModelClient, ModelRequest, ModelStreamEvent, ToolCall } from '@baton/core';
import { type ContextProvider, FileStore } from '@baton/core';
import { OpenAIChatModel, RECALLED_CONTEXT_PREFIX } from '@baton/core/openai';
import { DEMO_DATA_FILE } from '@baton/example-support-desk/data/dataSource.js';
import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import { createDeskAgents } from '@baton/example-support-desk/desk/deskAgents.js';
import { createOfflineModels, mapDeskModels } from '@baton/example-support-desk/desk/deskModels.js';
import { buildDeskWorkflow } from '@baton/example-support-desk/desk/deskWorkflow.js';
import { World, WorldDirectory } from '@baton/example-support-desk/tools/world.js';
import { EpisodicMemory, TokenCounter } from '@baton/memory';
import { type AbcdConversation, loadConversations } from '@baton/support-desk-models';
import { Command } from 'commander';
import { replayConversation, sessionIdFor } from '../src/replayConversation.js';
import { ModelClock } from '../src/timedModel.js';

// biome-ignore lint/suspicious/noExplicitAny: request bodies are read as JSON
type Body = any;
interface Answer {
  text: string;
  toolCalls: ToolCall[];
}

/** A Chat Completions server on 127.0.0.1: records each body, streams back the next queued answer. */
async function startChatServer() {
  const bodies: Body[] = [];
  const queue: Answer[] = [];
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 0, model: 'bench', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (part: Buffer) => {
      raw += part.toString();
    });
    req.on('end', () => {
      bodies.push(JSON.parse(raw));
      const answer = queue.shift() ?? { text: 'Out of answers.', toolCalls: [] };
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk({ role: 'assistant', content: '' }));
      if (answer.text !== '') res.write(chunk({ content: answer.text }));
      answer.toolCalls.forEach((call, index) => {
        res.write(
          chunk({
            tool_calls: [
              { index, id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } },
            ],
          }),
        );
      });
      res.write(chunk({}, answer.toolCalls.length > 0 ? 'tool_calls' : 'stop'));
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    bodies,
    queue,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Asks the offline model what to answer, queues that answer on the server, and makes the real OpenAIChatModel call. */
class WireModel implements ModelClient {
  constructor(
    readonly offline: ModelClient,
    readonly chat: OpenAIChatModel,
    readonly queue: Answer[],
    readonly onRequest: () => void,
  ) {}
  get model(): string {
    return this.chat.model;
  }
  async *stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    const answer: Answer = { text: '', toolCalls: [] };
    for await (const event of this.offline.stream(request)) {
      if (event.type === 'text.delta') answer.text += event.delta;
      else if (event.type === 'tool_call') answer.toolCalls.push(event.toolCall);
    }
    this.queue.push(answer);
    this.onRequest();
    yield* this.chat.stream(request);
  }
}

const counter = new TokenCounter({ encoding: 'o200k_base' });

/** Tokens of one wire message, counted as TokenCounter counts a model message. */
function messageTokens(message: Body): number {
  let tokens =
    3 + counter.countText(message.role) + counter.countText(typeof message.content === 'string' ? message.content : '');
  for (const call of message.tool_calls ?? [])
    tokens +=
      4 +
      counter.countText(call.id) +
      counter.countText(call.function.name) +
      counter.countText(call.function.arguments);
  if (typeof message.tool_call_id === 'string') tokens += counter.countText(message.tool_call_id);
  return tokens;
}

/** Input tokens of a request: its tools' JSON, its messages, 3 priming the reply. */
function requestTokens(body: Body): { tools: number; messages: number[]; total: number } {
  const tools = body.tools === undefined ? 0 : counter.countText(JSON.stringify(body.tools));
  const messages = (body.messages as Body[]).map(messageTokens);
  return { tools, messages, total: tools + messages.reduce((a, b) => a + b, 3) };
}

/** Tokens of `body`'s leading messages equal to `previous`'s (tools included when they are equal too). */
function stablePrefixTokens(body: Body, previous: Body | undefined): number {
  if (previous === undefined || JSON.stringify(body.tools) !== JSON.stringify(previous.tools)) return 0;
  const { tools, messages } = requestTokens(body);
  let tokens = tools;
  for (let i = 0; i < messages.length; i += 1) {
    if (JSON.stringify(body.messages[i]) !== JSON.stringify(previous.messages[i])) return i === 0 ? 0 : tokens;
    tokens += messages[i]!;
  }
  return tokens;
}

/** The request bodies of one replay of `conversations`, and the session of each. */
async function replayOnTheWire(
  conversations: readonly AbcdConversation[],
  customers: number | undefined,
  perTurnContext: boolean,
): Promise<{ bodies: Body[]; sessionOf: string[] }> {
  const ontology = loadOntology();
  const server = await startChatServer();
  const directory = await mkdtemp(join(tmpdir(), 'baton-token-bench-'));
  const store = new FileStore({ directory });
  const sessionOf: string[] = [];
  let currentSession = '';
  try {
    const chat = new OpenAIChatModel({
      model: 'gpt-4.1-mini',
      apiKey: 'sk-loopback',
      baseURL: server.baseURL,
      maxRetries: 0,
    });
    const models = mapDeskModels(
      createOfflineModels(conversations, ontology),
      (offline) => new WireModel(offline, chat, server.queue, () => sessionOf.push(currentSession)),
    );
    const worlds = new WorldDirectory();
    const agents = createDeskAgents(ontology, models, worlds);
    const episodic = new EpisodicMemory();
    let turn = 0;
    // Context that changes every turn, like ContextProvider's own example (the time now), beside recall.
    const memory: ContextProvider = perTurnContext
      ? {
          name: 'episodic-memory-and-clock',
          beforeTurn: async (args) => [
            ...((await episodic.beforeTurn(args)) ?? []),
            { role: 'context', content: `Now: turn ${++turn} of the replay` },
          ],
          onSessionClose: (args) => episodic.onSessionClose(args),
        }
      : episodic;
    for (const [index, conversation] of conversations.entries()) {
      worlds.set(sessionIdFor(conversation.id), World.fromConversation(conversation));
      await replayConversation(conversation, {
        clock: new ModelClock(),
        flows: ontology.flows,
        restartEvery: 0,
        onEvent: (event) => {
          currentSession = event.sessionId;
        },
        decide: () => ({ approved: true }),
        // With `customers`, the conversations belong to that many returning customers, whose past conversations memory recalls.
        open: ({ id, userId }) =>
          buildDeskWorkflow({ agents, store, memory }).session({
            id,
            userId: customers === undefined ? userId : `customer-${index % customers}`,
          }),
      });
    }
  } finally {
    await store.close();
    await server.close();
    await rm(directory, { recursive: true, force: true });
  }
  return { bodies: server.bodies, sessionOf };
}

/**
 * `body` as it would have been sent with context right after the instructions (where Baton put it
 * before): every context message moved behind the leading system messages.
 */
function contextAfterInstructions(body: Body): Body {
  const isContext = (m: Body) => m.role === 'system' && String(m.content).startsWith(RECALLED_CONTEXT_PREFIX);
  const messages = body.messages as Body[];
  let lead = 0;
  while (lead < messages.length && messages[lead].role === 'system' && !isContext(messages[lead])) lead += 1;
  const rest = messages.slice(lead);
  return {
    ...body,
    messages: [...messages.slice(0, lead), ...rest.filter(isContext), ...rest.filter((m) => !isContext(m))],
  };
}

/**
 * The share of input tokens, in %, that repeat the leading messages of the previous request in the
 * same session (`anyEarlier: false`) or of the earlier request of the session that shares most
 * (`anyEarlier: true`: what a prompt cache holding every earlier prefix of the session could reuse).
 */
function stableShare(bodies: readonly Body[], sessionOf: readonly string[], anyEarlier: boolean): number {
  const earlier = new Map<string, Body[]>();
  let total = 0;
  let stable = 0;
  bodies.forEach((body, i) => {
    const session = sessionOf[i] ?? '';
    const before = earlier.get(session) ?? [];
    total += requestTokens(body).total;
    stable += anyEarlier
      ? Math.max(0, ...before.map((b) => stablePrefixTokens(body, b)))
      : stablePrefixTokens(body, before.at(-1));
    before.push(body);
    earlier.set(session, before);
  });
  return (100 * stable) / total;
}

/** Prints the token figures of one replay. */
function report(label: string, { bodies, sessionOf }: { bodies: Body[]; sessionOf: string[] }): void {
  const perSession = new Map<string, { calls: number; tokens: number; stable: number; contextCalls: number }>();
  const previous = new Map<string, Body>();
  let calls = 0;
  let tokens = 0;
  let stable = 0;
  bodies.forEach((body, i) => {
    const session = sessionOf[i] ?? '';
    const total = requestTokens(body).total;
    const prefix = stablePrefixTokens(body, previous.get(session));
    previous.set(session, body);
    const entry = perSession.get(session) ?? { calls: 0, tokens: 0, stable: 0, contextCalls: 0 };
    entry.calls += 1;
    entry.tokens += total;
    entry.stable += prefix;
    const contextAt = (body.messages as Body[]).findIndex(
      (m) => m.role === 'system' && String(m.content).startsWith(RECALLED_CONTEXT_PREFIX),
    );
    if (contextAt >= 0) {
      entry.contextCalls += 1;
    }
    perSession.set(session, entry);
    calls += 1;
    tokens += total;
    stable += prefix;
  });
  const sessions = [...perSession.values()];
  const sorted = sessions.map((s) => s.tokens).sort((a, b) => a - b);
  console.log(`\n${label}`);
  console.log(
    `  model calls: ${calls} (${(calls / sessions.length).toFixed(1)} per conversation), ${sessions.reduce((n, s) => n + s.contextCalls, 0)} of them with recalled context`,
  );
  const userTurns = Math.max(
    ...bodies.map((body) => (body.messages as Body[]).filter((m) => m.role === 'user').length),
  );
  console.log(
    `  input tokens per model call: mean ${(tokens / calls).toFixed(0)}; at most ${userTurns} customer messages (turns) in one request`,
  );
  console.log(
    `  input tokens per conversation: mean ${(tokens / sessions.length).toFixed(0)}, median ${sorted[Math.floor(sorted.length / 2)]}, max ${sorted.at(-1)}`,
  );
  console.log(
    `  stable-prefix share: ${((100 * stable) / tokens).toFixed(1)}% of input tokens repeat the previous request's leading messages in the same session`,
  );
  const before = bodies.map(contextAfterInstructions);
  console.log(
    `    (with context right after the instructions instead, as before: ${stableShare(before, sessionOf, false).toFixed(1)}%)`,
  );
  console.log(
    `  against any earlier request of the session (a prompt cache keeps several prefixes): ${stableShare(bodies, sessionOf, true).toFixed(1)}%; with context after the instructions: ${stableShare(before, sessionOf, true).toFixed(1)}%`,
  );
}

async function main(): Promise<void> {
  const values = new Command()
    .name('tokenBench.ts')
    .description(
      'Tokens on the wire: the demo conversations with every agent on OpenAIChatModel against a loopback Chat Completions server.',
    )
    .option('--conversations <n>', 'how many demo conversations', Number, 40)
    .option('--customers <n>', 'returning customers in the second and third runs', Number, 8)
    .parse(process.argv)
    .opts<{ conversations: number; customers: number }>();
  const conversations = (await loadConversations(DEMO_DATA_FILE)).slice(0, values.conversations);
  const customers = values.customers;
  console.log(
    `support desk, ${conversations.length} demo conversations, every agent on OpenAIChatModel over Chat Completions on 127.0.0.1; tokens counted with o200k_base (@baton/memory's TokenCounter)`,
  );
  report('each conversation a new customer (no recall):', await replayOnTheWire(conversations, undefined, false));
  report(
    `the same conversations from ${customers} returning customers (episodic memory recalls their earlier conversations when relevant):`,
    await replayOnTheWire(conversations, customers, false),
  );
  report(
    'the same, plus a context provider whose context changes every turn (e.g. the time now):',
    await replayOnTheWire(conversations, customers, true),
  );
}

await main();
