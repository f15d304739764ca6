import {
  type BeforeTurnArgs,
  ConfigurationError,
  type ContextProvider,
  type Embedder,
  type Episode,
  type ModelClient,
  type ModelMessage,
  type SessionCloseArgs,
  type Store,
} from '@baton/core';
import {
  type CloseIdleSessionsOptions,
  type CloseIdleSessionsResult,
  closeIdleSessions,
  type IdleSweepOptions,
  startIdleSweep,
} from '../session/closeIdleSessions.js';
import { buildEpisode, transcriptOf } from './buildEpisode.js';
import { episodeEmbeddingText } from './episodeEmbedding.js';
import { EpisodeRecall, type RecalledEpisode, type RecallQuery, type RecallSettings } from './episodeRecall.js';
import { recalledContextMessage } from './recalledContext.js';

/** Where an {@link EpisodicMemory} hit an error it recovered from. */
export type EpisodicMemoryStage = 'summary' | 'embedding' | 'recall';

/** Options of {@link EpisodicMemory}. */
export interface EpisodicMemoryOptions {
  /** The store `recall`, `closeIdleSessions` and `startIdleSweep` use when not given one (a runtime passes its own to the hooks). */
  store?: Store;
  /** k, mode, thresholds and lexical settings of recall. */
  recall?: RecallSettings;
  /** Enables embedding and hybrid recall; episodes get an `embedding` when saved. */
  embedder?: Embedder;
  /** Writes episode summaries; without it they are extractive. */
  summarizer?: ModelClient;
  /** How many keywords an episode keeps (default 12). */
  keywords?: number;
  /**
   * Called with errors memory recovered from: a failed summary (the extractive one is used), a
   * failed embedding at save time (recall embeds the episode later), a failed embedding recall in
   * `beforeTurn` (hybrid falls back to lexical; embedding-only recalls nothing). Default: ignored.
   */
  onError?: (error: unknown, stage: EpisodicMemoryStage) => void;
}

/**
 * Episodic memory (docs/architecture.md "Memory"), a context provider: when a session closes it saves one
 * {@link Episode} through the store; before each turn it recalls the user's past episodes that are
 * relevant to the new message (in the same tenant, never another user's) and injects them as one
 * `context` message. Recall is lexical (BM25+, offline) by default, embedding-based or hybrid with
 * an {@link Embedder}.
 *
 * @throws {ConfigurationError} from the constructor when `recall.mode` is `'embedding'` or `'hybrid'` without an `embedder`
 * @example
 * ```ts
 * import { HandoffBuilder } from '@baton/handoff';
 * import { EpisodicMemory } from '@baton/memory';
 * const desk = new HandoffBuilder({ name: 'support-desk' })
 *   .participants(triage, billing)
 *   .coordinator(triage)
 *   .memory(new EpisodicMemory({ recall: { k: 3 } }))
 *   .build();
 * ```
 */
export class EpisodicMemory implements ContextProvider {
  /** The context provider's name, `'episodic-memory'`. */
  readonly name = 'episodic-memory';
  readonly #options: EpisodicMemoryOptions;
  readonly #recall: EpisodeRecall;

  /**
   * @param options `{ store?, recall?: { k?, mode?, minScore?, minSimilarity?, maxEpisodes?, lexical? }, embedder?, summarizer?, keywords?, onError? }`
   *   ({@link EpisodicMemoryOptions}); all optional: lexical recall of 3 episodes, extractive summaries, 12 keywords
   * @throws {ConfigurationError} when `recall.mode` is `'embedding'` or `'hybrid'` without an `embedder`
   */
  constructor(options: EpisodicMemoryOptions = {}) {
    this.#options = options;
    this.#recall = new EpisodeRecall(options.recall, options.embedder);
    const mode = this.#recall.defaultMode;
    if (mode !== 'lexical' && options.embedder === undefined) {
      throw new ConfigurationError(
        `EpisodicMemory recall mode ${JSON.stringify(mode)} needs an embedder: pass { embedder: new OpenAIEmbedder() }, or use mode 'lexical'.`,
      );
    }
  }

  /**
   * Recalls the session user's episodes relevant to the new message (the current session's own
   * episode left out) and returns them as one `context` message; nothing when the session has no
   * user or nothing passes the threshold.
   *
   * @param args what the runtime passes before a turn: `{ session, branchId, input, store, signal }`
   * @returns one `context` message headed `RECALLED_EPISODES_HEADING`, or `undefined`
   * @throws the store's errors; in lexical mode, every recall error. In the embedding modes a failed
   *   recall is reported to `onError` (stage `'recall'`) and the turn goes on (hybrid falls back to lexical)
   */
  async beforeTurn(args: BeforeTurnArgs): Promise<readonly ModelMessage[] | undefined> {
    const { session } = args;
    if (session.userId === undefined || args.input.trim() === '') return undefined;
    const query: RecallQuery = {
      userId: session.userId,
      query: args.input,
      excludeIds: [session.id],
      signal: args.signal,
    };
    if (session.tenantId !== undefined) query.tenantId = session.tenantId;
    let recalled: RecalledEpisode[];
    try {
      recalled = await this.#recall.recall(args.store, query);
    } catch (error) {
      if (this.#recall.defaultMode === 'lexical' || args.signal.aborted) throw error;
      this.#options.onError?.(error, 'recall');
      recalled =
        this.#recall.defaultMode === 'hybrid'
          ? await this.#recall.recall(args.store, { ...query, mode: 'lexical' })
          : [];
    }
    const message = recalledContextMessage(recalled);
    return message === undefined ? undefined : [message];
  }

  /**
   * Builds the closed session's episode and saves it (id = session id, so a second close saves
   * nothing; the summary is not even computed when the episode exists). A session without any user
   * or assistant text gets no episode.
   *
   * @param args what the runtime passes on close: `{ session, reason, messages, agents, store }` (`messages` of the `main` branch)
   * @throws the store's errors (a failed summary or embedding is reported to `onError` and the episode is saved without it)
   */
  async onSessionClose(args: SessionCloseArgs): Promise<void> {
    if (transcriptOf(args.messages).length === 0) return;
    const scope = args.session.tenantId === undefined ? {} : { tenantId: args.session.tenantId };
    if ((await args.store.getEpisode(args.session.id, scope)) !== undefined) return;
    const episode = await this.buildEpisode(args);
    await args.store.saveEpisode(episode);
  }

  /**
   * The episode {@link onSessionClose} would save: {@link buildEpisode} plus, with an embedder, its
   * `embedding` (and `metadata.embeddingModel`).
   *
   * @param args `{ session, reason, messages, agents }`
   * @returns the episode, not saved
   */
  async buildEpisode(args: Omit<SessionCloseArgs, 'store'>): Promise<Episode> {
    const options: Parameters<typeof buildEpisode>[1] = {};
    if (this.#options.summarizer !== undefined) options.summarizer = this.#options.summarizer;
    if (this.#options.keywords !== undefined) options.keywords = this.#options.keywords;
    if (this.#options.onError !== undefined) {
      const onError = this.#options.onError;
      options.onError = (error) => onError(error, 'summary');
    }
    const episode = await buildEpisode(args, options);
    const embedder = this.#options.embedder;
    const text = episodeEmbeddingText(episode);
    if (embedder !== undefined && text !== '') {
      try {
        const [vector] = await embedder.embed([text]);
        if (vector !== undefined) {
          episode.embedding = vector;
          episode.metadata = { ...episode.metadata, embeddingModel: embedder.model };
        }
      } catch (error) {
        this.#options.onError?.(error, 'embedding');
      }
    }
    return episode;
  }

  /**
   * Ranks one user's episodes (in one tenant) against a query.
   *
   * @param query `{ store?, tenantId?, userId, query, k?, mode?, excludeIds?, signal? }`; `store`
   *   defaults to the constructor's
   * @returns at most `k` (default 3) episodes with their scores, best first
   * @throws {ConfigurationError} without a store, or for an embedding mode without an embedder
   * @throws {InvalidInputError} for a missing user id or a bad `k`
   * @example
   * ```ts
   * const [best] = await memory.recall({ store, tenantId: 'acme', userId: 'u-42', query: 'what happened with my refund?' });
   * best?.episode.summary;
   * ```
   */
  async recall(query: RecallQuery & { store?: Store }): Promise<RecalledEpisode[]> {
    const { store, ...rest } = query;
    return this.#recall.recall(this.#store(store, 'recall'), rest);
  }

  /**
   * {@link closeIdleSessions} with this memory as the provider; `store` defaults to the constructor's.
   *
   * @param options `{ idleFor, store?, tenantId?, reason?, now?, limit?, providers? }`; `idleFor` in milliseconds
   * @returns `{ closed, skipped, failed }` session ids
   * @throws {ConfigurationError} when no store is given here or to the constructor; otherwise as {@link closeIdleSessions}
   * @example
   * ```ts
   * const memory = new EpisodicMemory({ store });
   * const { closed } = await memory.closeIdleSessions({ idleFor: 30 * 60_000 }); // each gets its episode
   * ```
   */
  async closeIdleSessions(
    options: Omit<CloseIdleSessionsOptions, 'providers' | 'store'> & {
      store?: Store;
      providers?: readonly ContextProvider[];
    },
  ): Promise<CloseIdleSessionsResult> {
    return closeIdleSessions({
      ...options,
      store: this.#store(options.store, 'closeIdleSessions'),
      providers: options.providers ?? [this],
    });
  }

  /**
   * {@link startIdleSweep} with this memory as the provider; `store` defaults to the constructor's.
   *
   * @param options `{ every, idleFor, store?, tenantId?, reason?, limit?, providers?, onSweep?, onError? }`; times in milliseconds
   * @returns the stop function: it stops the timer and resolves when a running sweep has finished
   * @throws {ConfigurationError} when no store is given here or to the constructor; otherwise as {@link startIdleSweep}
   * @example
   * ```ts
   * const stop = new EpisodicMemory({ store }).startIdleSweep({ every: 60_000, idleFor: 30 * 60_000 });
   * await stop();
   * ```
   */
  startIdleSweep(
    options: Omit<IdleSweepOptions, 'providers' | 'store'> & { store?: Store; providers?: readonly ContextProvider[] },
  ): () => Promise<void> {
    return startIdleSweep({
      ...options,
      store: this.#store(options.store, 'startIdleSweep'),
      providers: options.providers ?? [this],
    });
  }

  #store(store: Store | undefined, method: string): Store {
    const found = store ?? this.#options.store;
    if (found === undefined)
      throw new ConfigurationError(
        `EpisodicMemory.${method} needs a store: pass { store } to it or to the EpisodicMemory constructor.`,
      );
    return found;
  }
}
