import { readFile } from 'node:fs/promises';
import { InvalidInputError, NotFoundError } from '@baton/core';
import { z } from 'zod';

/** One turn of an ABCD conversation: the customer, the human agent, or the agent console's action log. */
export const AbcdTurnSchema = z.object({
  role: z.enum(['customer', 'agent', 'action']),
  text: z.string(),
});
/** `{ role: 'customer' | 'agent' | 'action', text }`. */
export type AbcdTurn = z.infer<typeof AbcdTurnSchema>;

/**
 * One line of a conversations file in ABCD's JSON Lines format (the desk's demo conversations,
 * ABCD conversations imported with `pnpm abcd:import`, or any file of the same shape):
 * `{ id, flow, subflow, turns: [{ role, text }] }` with an ABCD flow and subflow (`abcd/ontology.json`).
 */
export const AbcdConversationSchema = z.object({
  id: z.string().min(1),
  flow: z.string().min(1),
  subflow: z.string().min(1),
  turns: z.array(AbcdTurnSchema),
});
/** `{ id, flow, subflow, turns }`; other fields of the line are ignored. */
export type AbcdConversation = z.infer<typeof AbcdConversationSchema>;

/** What a conversations file must hold, for error messages. */
export const EXPECTED_FORMAT =
  'Expected JSON Lines: one {"id", "flow", "subflow", "turns": [{"role": "customer" | "agent" | "action", "text"}]} object per line, ' +
  "flow and subflow named as in ABCD (examples/support-desk/abcd/ontology.json). `pnpm abcd:import` converts ABCD's public release " +
  '(github.com/asappresearch/abcd) to this format.';

/**
 * Reads an ABCD JSON Lines file and validates every line.
 *
 * @param file path of the `.jsonl` file
 * @returns the conversations in file order
 * @throws {NotFoundError} when the file does not exist (the message says what format is expected)
 * @throws {InvalidInputError} naming the line of the first line that is not valid JSON or not a conversation,
 *   or when two lines share an id, or when the file holds no conversation
 * @example
 * ```ts
 * const conversations = await loadConversations(DEMO_DATA_FILE); // DEMO_DATA_FILE: the desk's data/dataSource.ts
 * ```
 */
export async function loadConversations(file: string): Promise<AbcdConversation[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new NotFoundError(`No conversation file at ${file}. ${EXPECTED_FORMAT}`, { cause: error });
    }
    throw error;
  }
  return parseConversations(text, file);
}

/**
 * Parses the text of an ABCD JSON Lines file (blank lines are skipped).
 *
 * @param source names the file in error messages
 * @throws {InvalidInputError} as {@link loadConversations}
 */
export function parseConversations(text: string, source: string): AbcdConversation[] {
  const conversations: AbcdConversation[] = [];
  const seen = new Set<string>();
  for (const [index, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (error) {
      throw new InvalidInputError(
        `${source}:${index + 1} is not valid JSON (${(error as Error).message}): ${JSON.stringify(line.slice(0, 80))}. ${EXPECTED_FORMAT}`,
      );
    }
    const parsed = AbcdConversationSchema.safeParse(raw);
    if (!parsed.success) {
      const issues = parsed.error.issues
        .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
        .join('; ');
      throw new InvalidInputError(`${source}:${index + 1} is not an ABCD conversation (${issues}). ${EXPECTED_FORMAT}`);
    }
    if (seen.has(parsed.data.id))
      throw new InvalidInputError(
        `${source}:${index + 1} repeats the conversation id ${JSON.stringify(parsed.data.id)}; ids must be unique.`,
      );
    seen.add(parsed.data.id);
    conversations.push(parsed.data);
  }
  if (conversations.length === 0) throw new InvalidInputError(`${source} holds no conversation. ${EXPECTED_FORMAT}`);
  return conversations;
}

/**
 * The customer's messages of a conversation, in order.
 * @returns the texts of its `customer` turns
 */
export function customerMessages(conversation: AbcdConversation): string[] {
  return conversation.turns.filter((turn) => turn.role === 'customer').map((turn) => turn.text);
}

/**
 * What a conversation's customer says before the agent first acts (its first console action):
 * the text a router learns from. At least the first customer message, at most the first four.
 * @returns those messages joined by newlines (`''` when the customer never speaks)
 */
export function openingText(conversation: AbcdConversation): string {
  const parts: string[] = [];
  for (const turn of conversation.turns) {
    if (turn.role === 'action' && parts.length > 0) break;
    if (turn.role === 'customer') parts.push(turn.text);
    if (parts.length >= 4) break;
  }
  return parts.join('\n');
}
