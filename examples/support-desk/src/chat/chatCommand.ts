import { createInterface } from 'node:readline/promises';
import { type BatonEvent, createId, SessionClosedError } from '@baton/core';
import { sessionTimeline } from '@baton/handoff';
import { EpisodicMemory } from '@baton/memory';
import { loadConversations } from '@baton/support-desk-models';
import { displayPath, resolveDataSource } from '../data/dataSource.js';
import { loadOntology } from '../data/ontology.js';
import { createDeskAgents, type DeskModels } from '../desk/deskAgents.js';
import { createOfflineModels, createOpenAIModels } from '../desk/deskModels.js';
import { chooseDeskStore, DEFAULT_CHAT_STORE_DIR } from '../desk/deskStore.js';
import { buildDeskWorkflow } from '../desk/deskWorkflow.js';
import { customerLines, WorldDirectory } from '../tools/world.js';
import { createChatRenderer } from './chatRenderer.js';
import { chatTranscript } from './chatTranscript.js';

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
 * answered at the prompt (y/n). `/close` (or `/quit`) closes the session, which saves its episode;
 * end of input (Ctrl-D) or Ctrl-C leaves it open, paused where it was (an approval stays pending), and
 * `--session ID` resumes it, printing the conversation so far first.
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
 * await chatCommand({ models: 'offline', user: 'u-42' }); // reads stdin until /close or end of input
 * ```
 */
export async function chatCommand(options: ChatCommandOptions): Promise<void> {
  const ontology = loadOntology();
  let models: DeskModels;
  if (options.models === 'openai') models = await createOpenAIModels();
  else {
    const source = await resolveDataSource({ data: options.data });
    const conversations = await loadConversations(source.file);
    console.log(
      `Data: ${source.label} (${conversations.length}, ${displayPath(source.file)}), what the offline models learn from`,
    );
    models = createOfflineModels(conversations, ontology);
  }
  const worlds = new WorldDirectory();
  const deskStore = chooseDeskStore({
    directory: options.storeDir ?? DEFAULT_CHAT_STORE_DIR,
    mongoUrl: process.env.MONGODB_URL,
  });
  const store = await deskStore.open();
  const workflow = buildDeskWorkflow({
    agents: createDeskAgents(ontology, models, worlds),
    store,
    memory: new EpisodicMemory(),
  });
  const session = await workflow.session({ id: options.session ?? `chat-${createId()}`, userId: options.user });
  if (session.info.status === 'closed') {
    await store.close();
    throw new SessionClosedError(
      `Session ${JSON.stringify(session.id)} is closed; start a new chat (leave out --session) to talk to the desk again.`,
    );
  }
  const render = createChatRenderer(process.stdout);
  const earlier = session.messages.length === 0 ? [] : chatTranscript(await sessionTimeline(store, session.id));
  // A failed turn (a provider error after retries) is shown and the chat goes on; the session keeps the unfinished turn.
  const play = async (events: AsyncIterable<BatonEvent>): Promise<void> => {
    try {
      for await (const event of events) render(event);
    } catch (error) {
      if (error instanceof SessionClosedError) throw error;
      console.log(`  ! ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
    }
  };
  console.log(
    `Support desk chat, session ${session.id}, store ${deskStore.kind} (${deskStore.location}), models ${options.models}.`,
  );
  console.log('Customers on file (play any of them; give what the agent asks for):');
  for (const line of customerLines(worlds.fallback)) console.log(`  ${line}`);
  console.log('Type /close to close the session; Ctrl-D or Ctrl-C leaves it open (resume with --session).\n');
  if (earlier.length > 0) console.log(`Resuming: the conversation so far\n${earlier.join('\n')}\n`);
  // Lines are read through the async iterator, which buffers them, so piped input works too. In a
  // terminal, readline echoes what the user types to `output` (and handles editing keys).
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: Boolean(process.stdin.isTTY) });
  rl.on('SIGINT', () => rl.close()); // Ctrl-C in a terminal ends the chat like Ctrl-D: the session stays open
  const lines = rl[Symbol.asyncIterator]();
  const ask = async (prompt: string): Promise<string | undefined> => {
    rl.setPrompt(prompt);
    rl.prompt();
    const next = await lines.next();
    if (!process.stdin.isTTY && !next.done) process.stdout.write(`${next.value}\n`);
    return next.done ? undefined : String(next.value);
  };
  let closing = false;
  try {
    for (;;) {
      const approval = session.pendingRequests.find((r) => r.type === 'tool_approval');
      if (approval !== undefined && approval.type === 'tool_approval') {
        const typed = await ask(`Approve ${approval.toolName} ${approval.arguments}? [y/n] `);
        if (typed === undefined) break; // Ctrl-C or Ctrl-D: no answer; the approval stays pending
        const answer = typed.trim().toLowerCase();
        const decision = answer.startsWith('y')
          ? ({ approved: true } as const)
          : ({ approved: false, reason: 'rejected at the prompt' } as const);
        await play(session.respond(approval.id, decision));
        continue;
      }
      const line = await ask('you> ');
      if (line === undefined) break; // input closed (Ctrl-D)
      const text = line.trim();
      if (text === '') continue;
      if (text === '/close' || text === '/quit') {
        closing = true;
        break;
      }
      const question = session.pendingRequests.find((r) => r.type === 'user_input');
      await play(question === undefined ? session.send(text) : session.respond(question.id, text));
      if ((session.info as { status: string }).status === 'closed') break; // a specialist closed the resolved conversation (end_conversation)
    }
  } finally {
    rl.close();
    if ((session.info as { status: string }).status === 'closed')
      console.log(`Session ${session.id} closed; its episode is saved in the store.`);
    else if (closing) {
      await session.close({ reason: 'the customer closed the chat' });
      console.log(`Session ${session.id} closed; its episode is saved in the store.`);
    } else console.log(`\nSession ${session.id} left open; continue it with --session ${session.id}.`);
    await store.close();
  }
}
