/**
 * Recall on real conversations: ABCD's dev conversations (ASAPP's Action-Based Conversations
 * Dataset, github.com/asappresearch/abcd, MIT; 400 of them in our runs), read from `$BATON_ABCD`
 * (a JSON Lines file in the support desk's format, or a folder holding `abcd-dev-400.jsonl`; see
 * examples/support-desk/README.md for making one from the public release), each closed
 * after the first half of its turns so that it becomes an episode, all under one user id; then,
 * per conversation, a customer message from its second half (text its episode does not contain)
 * is the query. Prints recall@1 and recall@3 of the right episode for lexical recall (several
 * settings), and for embeddings and hybrid when OPENAI_API_KEY is set.
 *
 * Run: BATON_ABCD=<file or folder> npx vitest bench --run --project @baton/memory test/bench/recall.bench.ts
 *
 * Mapping: customer → user message, agent → assistant message (agent "agent"); ABCD's `action`
 * turns (the agent console's log lines) are skipped: an episode's transcript holds user and
 * assistant text only, so they would not reach the episode either way. Queries, two ways (both
 * reported): the first customer turn of the second half with at least 4 words (else the first
 * customer turn there), and the customer turn of the second half with the most distinct non-stop
 * words. A conversation whose second half has no customer turn, or whose query text also occurs in
 * its first half, is left out of the figures.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { InMemoryStore, MAIN_BRANCH, type Message, type NewMessage } from '@baton/core';
import { OpenAIEmbedder } from '@baton/core/openai';
import { bench, describe } from 'vitest';
import { EpisodicMemory, type LexicalRecallOptions, type RecallMode, textWords } from '../../src/index.js';
import { appendConversation } from '../support/conversation.js';

interface AbcdConversation {
  id: string;
  flow: string;
  subflow: string;
  turns: Array<{ role: 'customer' | 'agent' | 'action'; text: string }>;
}

const USER = 'u-abcd';

/** The conversations file: `$BATON_ABCD`, or `abcd-dev-400.jsonl` in it when it is a folder. */
function dataFile(): string {
  const given = process.env.BATON_ABCD;
  if (given === undefined || given === '') {
    throw new Error(
      'The recall bench runs on ABCD conversations: set BATON_ABCD to a JSON Lines file of them ' +
        '({"id","flow","subflow","turns":[{"role":"customer"|"agent"|"action","text"}]} per line), or to a folder holding abcd-dev-400.jsonl ' +
        '(ABCD v1.1 is at github.com/asappresearch/abcd, MIT; examples/support-desk/README.md shows how to convert it).',
    );
  }
  const file = existsSync(given) && statSync(given).isDirectory() ? join(given, 'abcd-dev-400.jsonl') : given;
  if (!existsSync(file)) throw new Error(`BATON_ABCD names ${file}, which does not exist.`);
  return file;
}

function loadConversations(): AbcdConversation[] {
  return readFileSync(dataFile(), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as AbcdConversation);
}

const words = (text: string) => text.trim().split(/\s+/).filter(Boolean).length;

/** How a query is chosen among the customer turns of a conversation's second half. */
type QueryChoice = 'first' | 'richest';

/**
 * The query of a conversation, or undefined when it has none usable (see the file comment):
 * `first` = the first customer turn with at least 4 words (else the first customer turn);
 * `richest` = the customer turn with the most distinct words that are not stop words (ties: the earliest).
 */
function queryOf(conversation: AbcdConversation, choice: QueryChoice): string | undefined {
  const half = Math.floor(conversation.turns.length / 2);
  const second = conversation.turns.slice(half).filter((t) => t.role === 'customer');
  const richness = (text: string) => new Set(textWords(text)).size;
  const query =
    choice === 'first'
      ? (second.find((t) => words(t.text) >= 4) ?? second[0])?.text
      : second.reduce<string | undefined>(
          (best, t) => (best === undefined || richness(t.text) > richness(best) ? t.text : best),
          undefined,
        );
  if (query === undefined) return undefined;
  const firstHalf = conversation.turns.slice(0, half).map((t) => t.text);
  return firstHalf.includes(query) ? undefined : query;
}

/** Every conversation's first half as a closed session with its episode, in one store. */
async function buildEpisodes(conversations: readonly AbcdConversation[]): Promise<InMemoryStore> {
  const store = new InMemoryStore();
  const writer = new EpisodicMemory();
  for (const conversation of conversations) {
    const half = conversation.turns.slice(0, Math.floor(conversation.turns.length / 2));
    const messages: NewMessage[] = half.flatMap((t): NewMessage[] =>
      t.role === 'customer'
        ? [{ role: 'user', content: t.text }]
        : t.role === 'agent'
          ? [{ role: 'assistant', agent: 'agent', content: t.text }]
          : [],
    );
    const session = await store.createSession({ id: conversation.id, userId: USER });
    const stored: Message[] = messages.length > 0 ? await appendConversation(store, session.id, messages) : [];
    const closed = await store.updateSession(
      session.id,
      { status: 'closed', closedAt: new Date().toISOString(), closedReason: 'benchmark' },
      { expectedVersion: session.version },
    );
    await writer.onSessionClose({ session: closed, reason: 'benchmark', messages: stored, agents: ['agent'], store });
    if (stored.length !== (await store.readMessages(session.id, MAIN_BRANCH)).length)
      throw new Error('store lost messages');
  }
  return store;
}

interface Figures {
  recallAt1: number;
  recallAt3: number;
  sameSubflowAt1: number;
  empty: number;
  msPerQuery: number;
}

async function measure(
  store: InMemoryStore,
  cases: ReadonlyArray<{ conversation: AbcdConversation; query: string }>,
  memory: EpisodicMemory,
  mode: RecallMode,
  subflowOf: ReadonlyMap<string, string>,
): Promise<Figures> {
  let at1 = 0;
  let at3 = 0;
  let subflow = 0;
  let empty = 0;
  const started = performance.now();
  for (const { conversation, query } of cases) {
    const ids = (await memory.recall({ store, userId: USER, query, k: 3, mode })).map((r) => r.episode.id);
    if (ids.length === 0) empty += 1;
    if (ids[0] === conversation.id) at1 += 1;
    if (ids.includes(conversation.id)) at3 += 1;
    if (ids[0] !== undefined && subflowOf.get(ids[0]) === conversation.subflow) subflow += 1;
  }
  const n = cases.length;
  return {
    recallAt1: at1 / n,
    recallAt3: at3 / n,
    sameSubflowAt1: subflow / n,
    empty,
    msPerQuery: (performance.now() - started) / n,
  };
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const row = (name: string, f: Figures) =>
  `${name.padEnd(44)} recall@1 ${pct(f.recallAt1).padStart(6)}  recall@3 ${pct(f.recallAt3).padStart(6)}  same-subflow@1 ${pct(f.sameSubflowAt1).padStart(6)}  no result ${String(f.empty).padStart(3)}  ${f.msPerQuery.toFixed(1)} ms/query`;

/** Lexical settings compared; the first is the package default. */
const LEXICAL_VARIANTS: Array<[string, LexicalRecallOptions]> = [
  ['default (boosts 1; fuzzy 0.2, prefix, stem, stop words)', {}],
  ['no stemming', { stem: false }],
  ['no stop words', { stopWords: false }],
  ['no fuzzy', { fuzzy: false }],
  ['no prefix', { prefix: false }],
  ['fuzzy 0.1', { fuzzy: 0.1 }],
  ['user 2, others 1', { fields: { user: 2, assistant: 1, summary: 1, keywords: 1 } }],
  ['user text only', { fields: { user: 1, assistant: 0, summary: 0, keywords: 0 } }],
  ['user 3, summary 2, assistant 1, keywords 1', { fields: { user: 3, assistant: 1, summary: 2, keywords: 1 } }],
];

const conversations = loadConversations();
const casesOf = (choice: QueryChoice) =>
  conversations.flatMap((conversation) => {
    const query = queryOf(conversation, choice);
    return query === undefined ? [] : [{ conversation, query }];
  });
const subflowOf = new Map(conversations.map((c) => [c.id, c.subflow]));
const store = await buildEpisodes(conversations);
const episodes = await store.findEpisodes({ userId: USER });
const cases = casesOf('first');

// Control: a query the episode does contain (the richest customer turn of the FIRST half) must be found.
const control = conversations.flatMap((conversation) => {
  const firstHalf = conversation.turns
    .slice(0, Math.floor(conversation.turns.length / 2))
    .filter((t) => t.role === 'customer');
  const query = firstHalf.reduce<string | undefined>(
    (best, t) =>
      best === undefined || new Set(textWords(t.text)).size > new Set(textWords(best)).size ? t.text : best,
    undefined,
  );
  return query === undefined ? [] : [{ conversation, query }];
});

console.log(
  `\nABCD recall benchmark: ${episodes.length} episodes of one user (first half of each conversation). A random pick gives recall@1 0.25%, recall@3 0.75%.`,
);
console.log(
  `Control (query = richest customer turn of the first half, text the episode contains; ${control.length} queries):`,
);
console.log(row('lexical, default', await measure(store, control, new EpisodicMemory(), 'lexical', subflowOf)));
for (const choice of ['first', 'richest'] as const) {
  const these = casesOf(choice);
  console.log(
    `\nQueries: ${choice === 'first' ? 'first customer turn of the second half with >= 4 words' : 'richest customer turn of the second half (most distinct non-stop words)'}; ` +
      `${these.length} queries (${conversations.length - these.length} conversations without a usable query left out).`,
  );
  for (const [name, lexical] of LEXICAL_VARIANTS) {
    const memory = new EpisodicMemory({ recall: { lexical } });
    console.log(row(`lexical, ${name}`, await measure(store, these, memory, 'lexical', subflowOf)));
  }
  if (process.env.OPENAI_API_KEY) {
    const embedder = new OpenAIEmbedder();
    const memory = new EpisodicMemory({ embedder });
    console.log(row(`embedding (${embedder.model})`, await measure(store, these, memory, 'embedding', subflowOf)));
    console.log(
      row(`hybrid (RRF of lexical and ${embedder.model})`, await measure(store, these, memory, 'hybrid', subflowOf)),
    );
  } else {
    console.log(
      'embedding and hybrid recall: not run, OPENAI_API_KEY is not set (they call the OpenAI embeddings API).',
    );
  }
}

describe('recall latency, 400 episodes of one user', () => {
  const memory = new EpisodicMemory();
  let i = 0;
  bench(
    'lexical recall, k=3',
    async () => {
      const { query } = cases[i++ % cases.length]!;
      await memory.recall({ store, userId: USER, query, k: 3 });
    },
    { time: 2000 },
  );
});
