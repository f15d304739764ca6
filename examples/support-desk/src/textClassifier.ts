import MiniSearch from 'minisearch';

/** A training example: a text and its label (a flow, a subflow). */
export interface LabelledText {
  id: string;
  text: string;
  label: string;
}

/** A classification: the winning label, its vote share (0–1), and the ids of the neighbours that voted. */
export interface Classification {
  label: string;
  confidence: number;
  neighbours: string[];
}

/** Options of {@link NearestNeighbourClassifier}. */
export interface NearestNeighbourOptions {
  /** How many nearest neighbours vote (default 9). */
  k?: number;
  /** Only these labels may win (default: all). */
  labels?: readonly string[];
}

// Words that say nothing about what a customer needs: greetings, politeness, function words.
const STOP_WORDS = new Set(
  (
    'a about am an and any are as at be been but by can could did do does doing for from get got had has have hello help hey hi ' +
    'how i if im in is it its just let me morning my need no not of oh ok okay on or please question quick so some ' +
    'thank thanks that the there this to today too um up us want was we well what when where which who why will with would ' +
    'yes you your afternoon evening good day dear sir madam hope hiya greetings wondering wonder could like'
  ).split(' '),
);

/**
 * The words of `text` a classifier looks at: lowercased, without greetings and function words.
 * @returns the remaining terms, in order
 * @example
 * ```ts
 * contentTerms('Hi, I forgot my password!'); // ['forgot', 'password']
 * ```
 */
export function contentTerms(text: string): string[] {
  return (text.toLowerCase().match(/[a-z0-9$]+/g) ?? []).filter((term) => term.length > 1 && !STOP_WORDS.has(term));
}

/**
 * A nearest-neighbour text classifier over a maintained full-text index (MiniSearch, BM25 ranking
 * with fuzzy matching for typos): the `k` best-ranked training texts vote for their labels, each
 * with its BM25 score. Deterministic: ties go to the label that sorts first.
 *
 * @example
 * ```ts
 * const router = new NearestNeighbourClassifier([
 *   { id: 'a', text: 'I forgot my password', label: 'account_access' },
 *   { id: 'b', text: 'Where is my package?', label: 'shipping_issue' },
 * ]);
 * router.classify('cannot remember my password')?.label; // 'account_access'
 * ```
 */
export class NearestNeighbourClassifier {
  readonly #index: MiniSearch<LabelledText>;
  readonly #labels: Map<string, string>;
  readonly #k: number;
  readonly #allowed: ReadonlySet<string> | undefined;

  constructor(examples: readonly LabelledText[], options: NearestNeighbourOptions = {}) {
    this.#k = options.k ?? 9;
    this.#allowed = options.labels ? new Set(options.labels) : undefined;
    this.#index = new MiniSearch<LabelledText>({
      fields: ['text'],
      idField: 'id',
      tokenize: (text) => contentTerms(text),
      processTerm: (term) => term,
      searchOptions: { fuzzy: (term) => (term.length > 5 ? 0.2 : false), combineWith: 'OR' },
    });
    this.#labels = new Map();
    const kept = examples.filter((example) => this.#allowed === undefined || this.#allowed.has(example.label));
    for (const example of kept) this.#labels.set(example.id, example.label);
    this.#index.addAll(kept);
  }

  /** How many training texts it holds. */
  get size(): number {
    return this.#index.documentCount;
  }

  /**
   * Classifies a text.
   * @returns the label the nearest neighbours vote for, or `undefined` when the text has no
   *   content word any training text shares (a bare greeting)
   */
  classify(text: string): Classification | undefined {
    if (contentTerms(text).length === 0) return undefined;
    const hits = this.#index.search(text).slice(0, this.#k);
    if (hits.length === 0) return undefined;
    const votes = new Map<string, number>();
    let total = 0;
    for (const hit of hits) {
      const label = this.#labels.get(String(hit.id))!;
      votes.set(label, (votes.get(label) ?? 0) + hit.score);
      total += hit.score;
    }
    const [label, score] = [...votes.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))[0]!;
    return { label, confidence: total > 0 ? score / total : 0, neighbours: hits.map((hit) => String(hit.id)) };
  }
}
