import { createInterface } from 'node:readline/promises';
import { type BatonEvent, createId, SessionClosedError } from '@baton/core';
import { EpisodicMemory } from '@baton/memory';
import { loadConversations } from '../data/abcdData.js';
import { displayPath, resolveDataSource } from '../data/dataSource.js';
import { loadOntology } from '../data/ontology.js';
import { createDeskAgents, type DeskModels } from '../desk/deskAgents.js';
import { createOfflineModels, createOpenAIModels } from '../desk/deskModels.js';
import { chooseDeskStore, DEFAULT_CHAT_STORE_DIR } from '../desk/deskStore.js';
import { buildDeskWorkflow } from '../desk/deskWorkflow.js';
import { WorldDirectory } from '../tools/world.js';
import { createChatRenderer } from './chatRenderer.js';

/** Options of the `chat` command (see `cli.ts`). */
export interface ChatCommandOptions {
  /** `--data FILE` (absolute); otherwise the data is looked up as for `replay` (see `resolveDataSource`). */
  data?: string;
  storeDir?: string;
  models: 'offline' | 'openai';
  session?: string;
  user: string;
}

/**
 * The `chat` command: an interactive terminal chat with the desk. Output is streamed and shows
 * which agent speaks, each handoff, each console action and each pending request; an approval is
 * answered at the prompt (y/n). `/quit` closes the session, which saves its episode.
 * Offline, the router and policies learn from every conversation of the data (the first line printed names it); the world is ABCD's
 * ten role-played customers (e.g. Joyce Wu), one order each.
 *
 * @param options `{ data?, models, user, storeDir?, session? }`: the conversations file the offline models learn from (looked up when not given),
 *   `'offline'` or `'openai'`, the user id episodes are recalled for, the FileStore folder (default
 *   `examples/support-desk/.data/chat`), a session id to resume
 * @throws {SessionClosedError} when `session` names a closed session
 * @throws {NotFoundError} when the data file is missing, or `BATON_ABCD` names nothing usable (offline models)
 * @throws {ConfigurationError} for `models: 'openai'` without an API key
 * @example
 * ```ts
 * await chatCommand({ models: 'offline', user: 'u-42' }); // reads stdin until /quit or end of input
 * ```
 */
export async function chatCommand(options: ChatCommandOptions): Promise<void> {
  const ontology = loadOntology();
  let models: DeskModels;
  if (options.models === 'openai') models = await createOpenAIModels();
  else {
    const source = await resolveDataSource({ data: options.data });
    const conversations = await loadConversations(source.file);
    console.log(`Data: ${source.label} (${conversations.length}, ${displayPath(source.file)}), what the offline models learn from`);
    models = createOfflineModels(conversations, ontology);
  }
  const worlds = new WorldDirectory();
  const deskStore = chooseDeskStore({ directory: options.storeDir ?? DEFAULT_CHAT_STORE_DIR, mongoUrl: process.env.MONGODB_URL });
  const store = await deskStore.open();
  const workflow = buildDeskWorkflow({ agents: createDeskAgents(ontology, models, worlds), store, memory: new EpisodicMemory() });
  const session = await workflow.session({ id: options.session ?? `chat-${createId()}`, userId: options.user });
  if (session.info.status === 'closed') {
    await store.close();
    throw new SessionClosedError(`Session ${JSON.stringify(session.id)} is closed; start a new chat (leave out --session) to talk to the desk again.`);
  }
  const render = createChatRenderer(process.stdout);
  // A failed turn (a provider error after retries) is shown and the chat goes on; the session keeps the unfinished turn.
  const play = async (events: AsyncIterable<BatonEvent>): Promise<void> => {
    try {
      for await (const event of events) render(event);
    } catch (error) {
      if (error instanceof SessionClosedError) throw error;
      console.log(`  ! ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
    }
  };
  const customers = worlds.fallback.customers.slice(0, 3).map((c) => `${c.name} (account ${c.accountIds[0]}, order ${c.orders[0]?.orderId})`);
  console.log(`Support desk chat, session ${session.id}, store ${deskStore.kind} (${deskStore.location}), models ${options.models}.`);
  console.log(`Customers on file include ${customers.join(', ')}. Type /quit to close the session.\n`);
  // Lines are read through the async iterator, which buffers them, so piped input works too. In a
  // terminal, readline echoes what the user types to `output` (and handles editing keys).
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: Boolean(process.stdin.isTTY) });
  rl.on('SIGINT', () => rl.close()); // Ctrl-C in a terminal ends the chat like Ctrl-D: the session is closed and saved
  const lines = rl[Symbol.asyncIterator]();
  const ask = async (prompt: string): Promise<string | undefined> => {
    rl.setPrompt(prompt);
    rl.prompt();
    const next = await lines.next();
    if (!process.stdin.isTTY && !next.done) process.stdout.write(`${next.value}\n`);
    return next.done ? undefined : String(next.value);
  };
  try {
    for (;;) {
      const approval = session.pendingRequests.find((r) => r.type === 'tool_approval');
      if (approval !== undefined && approval.type === 'tool_approval') {
        const answer = ((await ask(`Approve ${approval.toolName} ${approval.arguments}? [y/n] `)) ?? 'n').trim().toLowerCase();
        const decision = answer.startsWith('y') ? ({ approved: true } as const) : ({ approved: false, reason: 'rejected at the prompt' } as const);
        await play(session.respond(approval.id, decision));
        continue;
      }
      const line = await ask('you> ');
      if (line === undefined) break; // input closed (Ctrl-D)
      const text = line.trim();
      if (text === '') continue;
      if (text === '/quit') break;
      const question = session.pendingRequests.find((r) => r.type === 'user_input');
      await play(question === undefined ? session.send(text) : session.respond(question.id, text));
      if ((session.info as { status: string }).status === 'closed') break; // a specialist closed the resolved conversation (end_conversation)
    }
  } finally {
    rl.close();
    await session.close({ reason: 'the customer left the chat' });
    console.log(`Session ${session.id} closed; its episode is saved in the store.`);
    await store.close();
  }
}
