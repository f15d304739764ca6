import { InvalidInputError } from '@baton/core';
import { z } from 'zod';

/**
 * A document of an agent's knowledge (a knowledge base article, a policy, a product sheet) that
 * {@link SemanticMemory} searches and puts before an agent's model calls as context.
 */
export interface KnowledgeDocument {
  /** Unique within its tenant (or among the documents without a tenant), e.g. `'refund-policy'`. */
  id: string;
  /** Only sessions of this tenant see it; omitted, every session does (shared knowledge). */
  tenantId?: string;
  /** Only these agents see it; omitted, every agent the memory serves does. */
  agents?: readonly string[];
  /** Its title, searched with the text and shown to the model. */
  title: string;
  /** Its text, searched and shown to the model (cut to the memory's token budget). */
  text: string;
  /** Anything the app keeps with it (a URL, a version); never searched nor shown to the model. */
  metadata?: Record<string, unknown>;
}

const nonEmpty = z.string().refine((s) => s.trim() !== '', 'must not be empty');

const KnowledgeDocumentSchema = z.object({
  id: nonEmpty,
  tenantId: nonEmpty.optional(),
  agents: z.array(nonEmpty).optional(),
  title: z.string(),
  text: nonEmpty,
  metadata: z.record(z.string(), z.unknown()).optional(),
});

/**
 * Checks a document's shape and returns a frozen copy of it.
 * @param document what the app passed
 * @throws {InvalidInputError} naming the document and the field that is wrong
 */
export function parseKnowledgeDocument(document: unknown): Readonly<KnowledgeDocument> {
  const parsed = KnowledgeDocumentSchema.safeParse(document);
  if (!parsed.success) {
    const id =
      typeof (document as { id?: unknown } | null)?.id === 'string'
        ? JSON.stringify((document as { id: string }).id)
        : 'without an id';
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || 'document'}: ${i.message}`).join('; ');
    throw new InvalidInputError(
      `Knowledge document ${id} is not valid (${issues}). ` +
        'A document is { id, title, text, tenantId?, agents?, metadata? } with a non-empty id and text.',
    );
  }
  const out: KnowledgeDocument = { id: parsed.data.id, title: parsed.data.title, text: parsed.data.text };
  if (parsed.data.tenantId !== undefined) out.tenantId = parsed.data.tenantId;
  if (parsed.data.agents !== undefined) out.agents = Object.freeze([...parsed.data.agents]);
  if (parsed.data.metadata !== undefined) out.metadata = parsed.data.metadata;
  return Object.freeze(out);
}

/** The key a document is kept under: its tenant and id (two tenants may use one id). */
export function documentKey(id: string, tenantId: string | undefined): string {
  return JSON.stringify([tenantId ?? null, id]);
}
