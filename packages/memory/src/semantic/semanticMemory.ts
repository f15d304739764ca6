import {
  type BeforeActivationArgs,
  ConfigurationError,
  type ContextProvider,
  type Embedder,
  InvalidInputError,
  type ModelMessage,
} from '@baton/core';
import { LexicalIndex, type LexicalMatchOptions } from '../search/lexicalIndex.js';
import { embeddingRanking, lexicalRanking, type RankedHit, rankHits, type SearchMode } from '../search/ranking.js';
import { TokenCounter } from '../working/tokenCounter.js';
import { knowledgeContextMessage } from './knowledgeContext.js';
import { documentKey, type KnowledgeDocument, parseKnowledgeDocument } from './knowledgeDocument.js';

/** The parts of a knowledge document lexical search reads. */
export type KnowledgeField = 'title' | 'text';

/** Options of {@link SemanticMemory}. */
export interface SemanticMemoryOptions {
  /** The documents it starts with (more with `add`). */
  documents?: readonly KnowledgeDocument[];
  /** The agents this knowledge is for; others get none of it. Default: every agent. */
  agents?: readonly string[];
  /**
   * The context provider's name, which keys its state and must differ between a workflow's providers.
   * Default: `'semantic-memory'`, or `'semantic-memory:billing+refunds'` for `agents: ['billing', 'refunds']`,
   * so one memory per agent's knowledge needs no names of its own.
   */
  name?: string;
  /** How many documents an agent gets per activation at most (default 3). */
  k?: number;
  /** How documents are ranked: default `'hybrid'` with an embedder, else `'lexical'`. */
  search?: SearchMode;
  /** Enables `'embedding'` and `'hybrid'` search (documents are embedded at their first search). */
  embedder?: Embedder;
  /** Lowest BM25+ score a lexical match needs (default 0: any matching term). */
  minScore?: number;
  /** Lowest cosine similarity an embedding match needs (default 0.3). */
  minSimilarity?: number;
  /** Field boosts (default 1 each), fuzzy, prefix, stemming and stop words of lexical search. */
  lexical?: LexicalMatchOptions & { fields?: Partial<Record<KnowledgeField, number>> };
  /** Most tokens of the context message (default 1 000): documents past it are cut or left out. */
  maxTokens?: number;
  /** Counts those tokens; pass working memory's `counter` to count as it does. Default `o200k_base`. */
  counter?: TokenCounter;
  /** Told when embedding search failed before an activation (hybrid then ranks lexically; embedding finds nothing). */
  onError?: (error: unknown) => void;
}

/** What {@link SemanticMemory.search} looks for. */
export interface KnowledgeQuery {
  /** Free text, e.g. the user's newest message. */
  query: string;
  /** The session's tenant: its documents and the shared ones are searched; omitted, only shared ones. */
  tenantId?: string;
  /**
   * The agent that will read them: documents for other agents are left out, and nothing is found for
   * an agent outside the memory's `agents`. Omitted: no agent filter.
   */
  agent?: string;
  /** Overrides the configured `k`. */
  k?: number;
  /** Overrides the configured search mode. */
  mode?: SearchMode;
  /** Cancels the embedder's calls. */
  signal?: AbortSignal;
}

/** A found document with its scores (see `RankedHit`). */
export interface KnowledgeHit {
  document: Readonly<KnowledgeDocument>;
  score: number;
  lexicalScore?: number;
  similarity?: number;
}

/** OpenAI's embedding models take at most 8 192 tokens per input; documents are cut a little below that. */
const EMBEDDING_INPUT_TOKENS = 8000;
const QUERY_VECTORS = 32;

/**
 * Semantic memory (docs/architecture.md "Memory"), a context provider: documents agents may consult
 * (a knowledge base), searched before each activation of an agent for the user's newest message, and
 * the best `k` put in that agent's model inputs as one `context` message, which is never stored
 * (not in the messages, not in checkpoints). Search is the one episodic recall uses: lexical BM25+
 * (offline) by default, embedding cosine similarity with an {@link Embedder}, or both fused by
 * reciprocal rank (`'hybrid'`). Knowledge is agent-scoped (the memory's `agents`, a document's
 * `agents`) and tenant-scoped (a document with a `tenantId` is seen only by that tenant's sessions;
 * one without, by every session). Documents live in memory: build it from the app's documents at
 * start-up; `remove`, `eraseTenant` and `clear` erase them for every later turn.
 *
 * @throws {ConfigurationError} from the constructor for `search: 'embedding' | 'hybrid'` without an
 *   `embedder`, or a `k` / `maxTokens` that is not a positive integer
 * @throws {InvalidInputError} from the constructor for a malformed document
 * @example
 * ```ts
 * import { HandoffBuilder } from '@baton/handoff';
 * import { SemanticMemory } from '@baton/memory';
 * const billingKb = new SemanticMemory({
 *   agents: ['billing'],
 *   documents: [{ id: 'refunds', title: 'Refunds', text: 'A duplicate charge is refunded within 3-5 business days.' }],
 * });
 * const desk = new HandoffBuilder({ name: 'desk' }).participants(triage, billing).memory(billingKb).build();
 * ```
 */
export class SemanticMemory implements ContextProvider {
  /** The context provider's name: `options.name`, else `'semantic-memory'` (with `:<agents joined by +>` when scoped). */
  readonly name: string;
  /** The mode used when a query names none. */
  readonly defaultMode: SearchMode;
  readonly #options: SemanticMemoryOptions;
  readonly #agents: ReadonlySet<string> | undefined;
  readonly #counter: TokenCounter;
  /** `cl100k_base`, as the embedding models count; made on first use (its ranks take ~10 MB of heap). */
  #embeddingCounter: TokenCounter | undefined;
  readonly #documents = new Map<string, Readonly<KnowledgeDocument>>();
  readonly #vectors = new Map<string, number[]>();
  readonly #queryVectors = new Map<string, number[]>();
  readonly #index: LexicalIndex<KnowledgeField>;

  /**
   * @param options `{ documents?, agents?, k?, search?, embedder?, minScore?, minSimilarity?, lexical?,
   *   maxTokens?, counter?, onError? }` ({@link SemanticMemoryOptions}); all optional: lexical search of 3
   *   documents in at most 1 000 tokens
   * @throws {ConfigurationError} for an embedding mode without an embedder, or a bad `k` or `maxTokens`
   * @throws {InvalidInputError} for a malformed document
   */
  constructor(options: SemanticMemoryOptions = {}) {
    this.#options = options;
    this.name =
      options.name ??
      (options.agents === undefined ? 'semantic-memory' : `semantic-memory:${options.agents.join('+')}`);
    this.defaultMode = options.search ?? (options.embedder === undefined ? 'lexical' : 'hybrid');
    if (this.defaultMode !== 'lexical' && options.embedder === undefined) {
      throw new ConfigurationError(
        `SemanticMemory search ${JSON.stringify(this.defaultMode)} needs an embedder: ` +
          "pass { embedder: new OpenAIEmbedder() }, or use search 'lexical'.",
      );
    }
    for (const [name, value] of [
      ['k', options.k],
      ['maxTokens', options.maxTokens],
    ] as const) {
      if (value !== undefined && (!Number.isInteger(value) || value <= 0)) {
        throw new ConfigurationError(
          `SemanticMemory ${name} must be a positive integer, got ${JSON.stringify(value)}.`,
        );
      }
    }
    this.#agents = options.agents === undefined ? undefined : new Set(options.agents);
    this.#counter = options.counter ?? new TokenCounter();
    const { fields, ...match } = options.lexical ?? {};
    this.#index = new LexicalIndex({ title: 1, text: 1, ...fields }, match);
    this.add(options.documents ?? []);
  }

  /** How many documents it holds (every tenant's). */
  get size(): number {
    return this.#documents.size;
  }

  /**
   * Adds documents; one with the id (and tenant) of a held document replaces it.
   * @param documents one document or several
   * @throws {InvalidInputError} for a malformed document (none of the batch is added)
   */
  add(documents: KnowledgeDocument | readonly KnowledgeDocument[]): void {
    const parsed = (Array.isArray(documents) ? documents : [documents as KnowledgeDocument]).map(
      parseKnowledgeDocument,
    );
    for (const document of parsed) {
      const key = documentKey(document.id, document.tenantId);
      this.#documents.set(key, document);
      this.#vectors.delete(key);
      this.#index.add(key, { title: document.title, text: document.text });
    }
  }

  /**
   * The document with this id (in this tenant, or among the shared ones without `tenantId`).
   * @returns `undefined` when there is none
   */
  get(id: string, scope: { tenantId?: string } = {}): Readonly<KnowledgeDocument> | undefined {
    return this.#documents.get(documentKey(id, scope.tenantId));
  }

  /**
   * Removes one document: later searches and turns no longer see it.
   * @param id the document's id
   * @param scope `{ tenantId }` for a tenant's document; omitted, the shared document with this id
   * @returns whether there was one
   */
  remove(id: string, scope: { tenantId?: string } = {}): boolean {
    return this.#delete(documentKey(id, scope.tenantId));
  }

  /**
   * Removes every document of one tenant (shared documents stay).
   * @param tenantId the tenant
   * @returns how many documents were removed
   * @throws {InvalidInputError} for an empty tenant id
   */
  eraseTenant(tenantId: string): number {
    if (typeof tenantId !== 'string' || tenantId === '')
      throw new InvalidInputError(`eraseTenant needs a tenant id, got ${JSON.stringify(tenantId)}.`);
    let removed = 0;
    for (const [key, document] of [...this.#documents])
      if (document.tenantId === tenantId && this.#delete(key)) removed += 1;
    return removed;
  }

  /** Removes every document of every tenant. */
  clear(): void {
    for (const key of [...this.#documents.keys()]) this.#delete(key);
  }

  /**
   * Ranks the documents a tenant's agent may see against a query.
   * @param query `{ query, tenantId?, agent?, k?, mode?, signal? }` ({@link KnowledgeQuery})
   * @returns at most `k` documents with their scores, best first
   * @throws {InvalidInputError} for a non-string query or a bad `k`
   * @throws {ConfigurationError} for mode `'embedding'` or `'hybrid'` without an embedder
   * @throws the embedder's errors in those modes
   * @example
   * ```ts
   * const [best] = await kb.search({ query: 'I was charged twice', tenantId: 'acme', agent: 'billing' });
   * best?.document.title; // 'Refunds'
   * ```
   */
  async search(query: KnowledgeQuery): Promise<KnowledgeHit[]> {
    const k = query.k ?? this.#options.k ?? 3;
    const mode = query.mode ?? this.defaultMode;
    if (typeof query.query !== 'string')
      throw new InvalidInputError(`Knowledge search query must be a string, got ${JSON.stringify(query.query)}.`);
    if (!Number.isInteger(k) || k <= 0)
      throw new InvalidInputError(`Knowledge search k must be a positive integer, got ${JSON.stringify(k)}.`);
    if (mode !== 'lexical' && this.#options.embedder === undefined) {
      throw new ConfigurationError(
        `Knowledge search mode ${JSON.stringify(mode)} needs an embedder: ` +
          "pass { embedder } to SemanticMemory, or use mode 'lexical'.",
      );
    }
    // An agent the memory does not serve sees none of it, as in beforeActivation.
    if (query.agent !== undefined && this.#agents !== undefined && !this.#agents.has(query.agent)) return [];
    const visible = (key: string) => {
      const document = this.#documents.get(key);
      return (
        document !== undefined &&
        (document.tenantId === undefined || document.tenantId === query.tenantId) &&
        (query.agent === undefined || document.agents === undefined || document.agents.includes(query.agent))
      );
    };
    const lexical =
      mode === 'embedding'
        ? []
        : lexicalRanking(this.#index.search(query.query, this.#documents.size, visible), this.#options.minScore ?? 0);
    const semantic = mode === 'lexical' ? [] : await this.#semantic(query, visible);
    return rankHits(mode, lexical, semantic, k).flatMap((hit) => this.#toHit(hit));
  }

  /**
   * Searches the knowledge the agent about to act may see (in the session's tenant) for the user's
   * newest message and returns the best documents as one `context` message for that agent's model
   * inputs; nothing for an agent the memory does not serve, a blank message, or no match.
   *
   * @param args what the runtime passes before an activation: `{ session, branchId, input, store, signal, agent }`
   * @returns one `context` message headed `KNOWLEDGE_HEADING`, or `undefined`
   * @throws in lexical mode, every search error. In the embedding modes a failed search is reported to
   *   `onError` and the turn goes on (hybrid falls back to lexical)
   */
  async beforeActivation(args: BeforeActivationArgs): Promise<readonly ModelMessage[] | undefined> {
    if (this.#agents !== undefined && !this.#agents.has(args.agent)) return undefined;
    if (args.input.trim() === '' || this.#documents.size === 0) return undefined;
    const query: KnowledgeQuery = { query: args.input, agent: args.agent, signal: args.signal };
    if (args.session.tenantId !== undefined) query.tenantId = args.session.tenantId;
    let hits: KnowledgeHit[];
    try {
      hits = await this.search(query);
    } catch (error) {
      if (this.defaultMode === 'lexical' || args.signal.aborted) throw error;
      this.#options.onError?.(error);
      hits = this.defaultMode === 'hybrid' ? await this.search({ ...query, mode: 'lexical' }) : [];
    }
    const message = knowledgeContextMessage(
      hits.map((hit) => hit.document),
      this.#counter,
      this.#options.maxTokens ?? 1000,
    );
    return message === undefined ? undefined : [message];
  }

  async #semantic(query: KnowledgeQuery, visible: (key: string) => boolean): Promise<RankedHit[]> {
    const embedder = this.#options.embedder!;
    if (query.query.trim() === '') return [];
    const options = query.signal === undefined ? {} : { signal: query.signal };
    const keys = [...this.#documents.keys()].filter(visible);
    const missing = keys
      .filter((key) => !this.#vectors.has(key))
      .map((key) => [key, this.#documents.get(key)!] as const);
    if (missing.length > 0) {
      this.#embeddingCounter ??= new TokenCounter({ encoding: 'cl100k_base' });
      const counter = this.#embeddingCounter;
      const texts = missing.map(([, d]) =>
        counter.truncate(d.title === '' ? d.text : `${d.title}\n${d.text}`, EMBEDDING_INPUT_TOKENS),
      );
      const vectors = await embedder.embed(texts, options);
      missing.forEach(([key, document], i) => {
        // A document replaced or removed while it was being embedded keeps no stale vector.
        if (this.#documents.get(key) === document) this.#vectors.set(key, vectors[i]!);
      });
    }
    const queryVector = await this.#queryVector(query.query, options);
    const candidates = keys.flatMap((key) => {
      const vector = this.#vectors.get(key);
      return vector === undefined ? [] : [[key, vector] as const];
    });
    return embeddingRanking(queryVector, candidates, this.#options.minSimilarity ?? 0.3);
  }

  /** The query's vector; the last few are kept, since every activation of a turn searches the same message. */
  async #queryVector(text: string, options: { signal?: AbortSignal }): Promise<number[]> {
    const known = this.#queryVectors.get(text);
    if (known !== undefined) return known;
    const [vector] = await this.#options.embedder!.embed([text], options);
    if (this.#queryVectors.size >= QUERY_VECTORS) this.#queryVectors.delete(this.#queryVectors.keys().next().value!);
    this.#queryVectors.set(text, vector!);
    return vector!;
  }

  #toHit(hit: RankedHit): KnowledgeHit[] {
    const document = this.#documents.get(hit.id);
    if (document === undefined) return [];
    const out: KnowledgeHit = { document, score: hit.score };
    if (hit.lexicalScore !== undefined) out.lexicalScore = hit.lexicalScore;
    if (hit.similarity !== undefined) out.similarity = hit.similarity;
    return [out];
  }

  #delete(key: string): boolean {
    this.#vectors.delete(key);
    this.#index.remove(key);
    return this.#documents.delete(key);
  }
}
