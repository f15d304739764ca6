/**
 * Baton's quickstart: run it twice on the same folder.
 *
 * Run 1: customer u-42 writes in; triage hands off to billing, whose refund needs a human's approval,
 *        so the turn pauses and this process exits, as a server being restarted would.
 * Run 2: a new process builds a new FileStore and workflow on the same folder, finds the paused
 *        approval and approves it; the session closes into an episode, and the same customer's next
 *        session recalls it (the recalled `context` message is printed as the model receives it).
 *
 * Usage: tsx --conditions=source src/quickstart.ts [DATA_DIR]   (default: examples/quickstart/.data)
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BatonEvent, FileStore, isBatonError, type ModelClient } from '@baton/core';
import type { HandoffSession, HandoffWorkflow } from '@baton/handoff';
import { buildDesk, createModels, type DeskModels } from './desk.ts';

const USER = 'u-42';
const dataDir = process.argv[2]
  ? resolve(process.env.INIT_CWD ?? process.cwd(), process.argv[2]) // pnpm runs scripts in the package folder
  : fileURLToPath(new URL('../.data', import.meta.url));

const models = await createModels();
const store = new FileStore({ directory: dataDir });
const desk = buildDesk(store, showRecalledContext(models));
console.log(`Models: ${models.label}\nStore:  FileStore in ${dataDir}`);

try {
  const sessions = await store.listSessions({ userId: USER });
  const paused = await findPausedSession(
    desk,
    sessions.filter((s) => s.status === 'active').map((s) => s.id),
  );
  if (paused === undefined) await firstRun(`chat-${sessions.length + 1}`);
  else await afterRestart(paused, `chat-${sessions.length + 1}`);
} catch (error) {
  // Baton's errors name the problem and the fix (a wrong API key, an unreachable OPENAI_BASE_URL, …).
  if (!isBatonError(error)) throw error;
  console.error(`\n${error.name} (${error.code}): ${error.message}`);
  process.exitCode = 1;
} finally {
  await store.close();
}

/** Run 1: the customer's message, up to the approval request. */
async function firstRun(sessionId: string): Promise<void> {
  console.log(`\n== Run 1: ${USER} opens ${sessionId} ==`);
  const session = await desk.session({ id: sessionId, userId: USER });
  await show(session.send('I was charged twice for order 1234, please refund the duplicate.'));
  if (session.pendingRequests.length === 0) {
    console.log('\nThe turn ended without an approval request (a live model may ask a question first).');
    return;
  }
  console.log('\nThe refund waits for a human. This process exits now, as a restarted server would.');
  console.log('Run the same command again: a new process picks the approval up from the store.');
}

/** Run 2: answer the paused approval, close the session into an episode, and open the user's next session. */
async function afterRestart(session: HandoffSession, nextId: string): Promise<void> {
  console.log(`\n== Run 2: a new process, a new FileStore and workflow on the same folder ==`);
  const approval = session.pendingRequests[0];
  if (approval?.type !== 'tool_approval') throw new Error(`${session.id} waits on ${approval?.type}, not an approval`);
  const wanted = `${approval.toolName}(${approval.arguments})`;
  console.log(`${session.id} is paused: ${approval.agent} wants ${wanted}. Approving.`);
  await show(session.respond(approval.id, { approved: true })); // a human's click in a real app

  await session.close({ reason: 'resolved' }); // EpisodicMemory writes the episode here
  const [episode] = await store.findEpisodes({ userId: USER, limit: 1 });
  console.log(`\nClosed ${session.id}; episode saved, keywords: ${episode?.keywords.join(', ')}`);

  console.log(`\n== The same customer comes back: ${nextId} ==`);
  const next = await desk.session({ id: nextId, userId: USER });
  await show(next.send('Where is my parcel for order 1234? Did the refund go through?'));
  await next.close({ reason: 'resolved' });
  console.log(`\nDone. Run again to start a new conversation (episodes stay), or delete ${dataDir} to start over.`);
}

/** The session among `ids` that waits on a request (run 1 left it so), opened from the store. */
async function findPausedSession(workflow: HandoffWorkflow, ids: string[]): Promise<HandoffSession | undefined> {
  for (const id of ids) {
    const session = await workflow.session({ id, userId: USER, create: false });
    if (session.pendingRequests.length > 0) return session;
  }
  return undefined;
}

/** Prints what a user of the desk would follow: messages, handoffs, tool calls and requests. */
async function show(turn: AsyncIterable<BatonEvent>): Promise<void> {
  for await (const event of turn) {
    if (event.type === 'handoff') console.log(`  -> ${event.from} hands off to ${event.to} (${event.reason ?? '-'})`);
    if (event.type === 'request' && event.request.type === 'tool_approval') {
      console.log(`  || paused: ${event.request.toolName} needs a human's approval`);
    }
    if (event.type !== 'message') continue;
    const m = event.message;
    if (m.role === 'user') console.log(`  ${USER}: ${m.content}`);
    if (m.role === 'assistant' && m.content) console.log(`  ${m.agent}: ${m.content}`);
    for (const call of m.toolCalls ?? []) {
      if (!call.name.startsWith('handoff_to_')) console.log(`  ${m.agent} calls ${call.name}(${call.arguments})`);
    }
    const handoff = m.toolName?.startsWith('handoff_to_');
    if (m.role === 'tool' && !handoff) console.log(`  ${m.toolName} returned ${m.content}`);
  }
}

/**
 * Wraps each model so the first time recalled memory (the `context` message EpisodicMemory adds to a
 * turn's input) reaches a model, it is printed: it is never stored in the session's history.
 */
function showRecalledContext(models: DeskModels): DeskModels {
  const printed = new Set<string>();
  const wrap = (model: ModelClient): ModelClient => ({
    model: model.model,
    stream(request) {
      for (const m of request.messages) {
        if (m.role !== 'context' || printed.has(m.content)) continue;
        printed.add(m.content);
        console.log(`  [recalled context, as ${request.agent}'s model receives it]`);
        for (const line of m.content.split('\n')) console.log(`    | ${line}`.trimEnd());
      }
      return model.stream(request);
    },
  });
  return { ...models, triage: wrap(models.triage), billing: wrap(models.billing), shipping: wrap(models.shipping) };
}
