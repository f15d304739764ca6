import type { Embedder } from '@baton/core';

/** Words a real embedding model would place close together; each group shares one dimension. */
const CONCEPTS: Record<string, string> = {
  refund: 'refund',
  refunded: 'refund',
  reimburse: 'refund',
  reimbursed: 'refund',
  money: 'refund',
  back: 'refund',
  charged: 'charge',
  charge: 'charge',
  billed: 'charge',
  twice: 'charge',
  double: 'charge',
  duplicate: 'charge',
  parcel: 'delivery',
  package: 'delivery',
  delivery: 'delivery',
  courier: 'delivery',
  arrived: 'delivery',
  shipped: 'delivery',
  password: 'login',
  login: 'login',
  account: 'login',
  locked: 'login',
};

/**
 * A small deterministic {@link Embedder} for tests: each text becomes a normalised vector over a
 * few concepts (plus one dimension for everything else), so texts about the same thing are close
 * even without shared words — as with a real embedding model. Counts its calls and texts.
 */
export class ConceptEmbedder implements Embedder {
  readonly model = 'concept-embedder-v1';
  readonly dimensions = 5;
  calls = 0;
  texts = 0;
  failNext = 0;

  async embed(texts: readonly string[]): Promise<number[][]> {
    this.calls += 1;
    this.texts += texts.length;
    if (this.failNext > 0) {
      this.failNext -= 1;
      throw new Error('embedding service unavailable');
    }
    const axes = ['refund', 'charge', 'delivery', 'login'];
    return texts.map((text) => {
      const v = [0, 0, 0, 0, 0.1];
      for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
        const concept = CONCEPTS[word];
        if (concept !== undefined) v[axes.indexOf(concept)]! += 1;
      }
      const norm = Math.hypot(...v);
      return v.map((x) => x / norm);
    });
  }
}
