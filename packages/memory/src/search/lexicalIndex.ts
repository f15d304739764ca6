import MiniSearch from 'minisearch';
import { normalizeTerm } from './textTerms.js';

/** How terms are matched by a {@link LexicalIndex}. */
export interface LexicalMatchOptions {
  /** Fuzzy matching (MiniSearch): a fraction of the term length as edit distance (default 0.2), or `false`. */
  fuzzy?: number | false;
  /** Whether a query term also matches longer terms it starts (default true). */
  prefix?: boolean;
  /** Whether words are reduced to their Porter stem (default true). */
  stem?: boolean;
  /** Whether English and chat stop words are left out (default true). */
  stopWords?: boolean;
}

/** One lexical match: the document id and its BM25+ score (unbounded, higher is better). */
export interface LexicalHit {
  id: string;
  score: number;
}

/**
 * A full-text index (MiniSearch, BM25+ scoring) over documents made of named text fields, with terms
 * normalised by {@link normalizeTerm}: lowercased, English and chat stop words left out, stemmed.
 * Queries are OR-combined, with prefix and fuzzy matching as configured; a field with boost 0 is not
 * searched. The one lexical ranker of this package: episodic recall (`EpisodeIndex`) and semantic
 * memory (`SemanticMemory`) both search through it. Documents can be added and removed one by one.
 *
 * @example
 * ```ts
 * import { LexicalIndex } from '@baton/memory';
 * const index = new LexicalIndex({ title: 2, text: 1 });
 * index.add('refunds', { title: 'Refunds', text: 'A duplicate charge is refunded within 3-5 business days.' });
 * index.search('charged twice', 3); // [{ id: 'refunds', score: 1.9 }]
 * ```
 */
export class LexicalIndex<F extends string = string> {
  readonly #boosts: Readonly<Record<F, number>>;
  readonly #options: Required<LexicalMatchOptions>;
  readonly #search: MiniSearch;

  /**
   * @param boosts the fields every document has, each with its boost (a field with boost 0 is indexed but not searched)
   * @param options `{ fuzzy?, prefix?, stem?, stopWords? }` ({@link LexicalMatchOptions})
   */
  constructor(boosts: Readonly<Record<F, number>>, options: LexicalMatchOptions = {}) {
    this.#boosts = boosts;
    this.#options = {
      fuzzy: options.fuzzy ?? 0.2,
      prefix: options.prefix ?? true,
      stem: options.stem ?? true,
      stopWords: options.stopWords ?? true,
    };
    const termOptions = { stem: this.#options.stem, stopWords: this.#options.stopWords };
    this.#search = new MiniSearch({
      fields: Object.keys(boosts),
      storeFields: [],
      processTerm: (term) => normalizeTerm(term, termOptions),
    });
  }

  /** How many documents it indexes. */
  get size(): number {
    return this.#search.documentCount;
  }

  /** Whether a document with this id is indexed. */
  has(id: string): boolean {
    return this.#search.has(id);
  }

  /**
   * Indexes a document, replacing the one with the same id.
   * @param id the document's id
   * @param fields its text per field (a missing field is empty)
   */
  add(id: string, fields: Readonly<Partial<Record<F, string>>>): void {
    if (this.#search.has(id)) this.#search.discard(id);
    this.#search.add({ ...fields, id });
  }

  /**
   * Removes a document from the index.
   * @returns whether it was indexed
   */
  remove(id: string): boolean {
    if (!this.#search.has(id)) return false;
    this.#search.discard(id);
    return true;
  }

  /**
   * The `k` best-matching documents, best first; documents matching no query term are left out.
   * @param query free text, e.g. the user's new message
   * @param k the most hits to return
   * @param filter when given, only documents whose id it accepts are returned
   * @returns `{ id, score }` hits, best first; `[]` when every field boost is 0
   */
  search(query: string, k: number, filter?: (id: string) => boolean): LexicalHit[] {
    const fields = (Object.keys(this.#boosts) as F[]).filter((f) => this.#boosts[f] > 0);
    if (fields.length === 0) return [];
    const boost: Record<string, number> = {};
    for (const f of fields) boost[f] = this.#boosts[f];
    const options = {
      fields,
      boost,
      fuzzy: this.#options.fuzzy,
      prefix: this.#options.prefix,
      combineWith: 'OR' as const,
    };
    const found = this.#search.search(
      query,
      filter === undefined ? options : { ...options, filter: (hit) => filter(String(hit.id)) },
    );
    return found.slice(0, k).map((hit) => ({ id: String(hit.id), score: hit.score }));
  }
}
