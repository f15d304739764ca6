/**
 * ABCD's ontology and knowledge base as the offline models read them (the desk loads them from its `abcd/` folder:
 * `loadOntology` in `examples/support-desk/src/data/ontology.ts`).
 */
export interface Ontology {
  /** The 10 flows, in ontology order. */
  flows: readonly string[];
  /** Subflows per flow. */
  subflows: Readonly<Record<string, readonly string[]>>;
  /** Every console action with its slots, e.g. `verify-identity → [customer_name, account_id, order_id, zip_code]`. */
  actions: ReadonlyMap<string, { group: string; slots: readonly string[] }>;
  /** Example values of enumerable slots (`membership_level → [guest, bronze, silver, gold]`). */
  enumerable: Readonly<Record<string, readonly string[]>>;
  /** kb.json: the guidelines' sequence of actions per subflow. */
  sequences: Readonly<Record<string, readonly string[]>>;
  /** The flow a subflow belongs to. */
  flowOf(subflow: string): string | undefined;
}

/**
 * Slots an action takes beyond ontology.json's, because a guideline asks for them: to recover a
 * username, identity is verified with "3 out of 4" of full name, zip code, phone number and email
 * address (guidelines.json, Account Access / Recover Username), and the console's verify-identity
 * has no phone or email field.
 *
 * @example
 * ```ts
 * GUIDELINE_SLOTS['verify-identity']; // ['phone', 'email']
 * ```
 */
export const GUIDELINE_SLOTS: Readonly<Record<string, readonly string[]>> = { 'verify-identity': ['phone', 'email'] };

/** The coordinator's agent name the models hand back to and answer as, unless told otherwise. */
export const TRIAGE = 'triage';
