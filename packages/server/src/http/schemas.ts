import { z } from 'zod';
import { HttpError } from './errors.js';

const id = z.string().min(1).max(128);

/**
 * Metadata as the client sent it: a JSON object, passed on uncopied. (`z.record` would copy it key by
 * key, and assigning a `"__proto__"` key drops it, so the store's key rules would never see it.)
 */
const metadata = z.custom<Record<string, unknown>>(
  (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
  {
    error: 'expected a JSON object',
  },
);

/**
 * `POST /sessions`: `{ id?, metadata? }`; the server makes an id when none is given. `metadata` is
 * checked by the store's rules when the session is created (see `createSession`).
 */
export const CreateSessionBody = z.strictObject({ id: id.optional(), metadata: metadata.optional() });

/**
 * `POST /sessions/:id/messages`: `{ text, assets? }`, the user's message (or several sent in a
 * row), and the ids of the session's assets it refers to (uploaded with `POST /sessions/:id/assets`).
 */
export const SendMessageBody = z.strictObject({
  text: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)], {
    error: 'expected the message text: a non-empty string, or a non-empty array of strings',
  }),
  assets: z.array(id).max(32).optional(),
});

/**
 * `POST /sessions/:id/requests/:requestId`: exactly one of `{ text }` (answers a `user_input`
 * request), `{ approved, reason?, always? }` (a `tool_approval`; `always: 'session'` with
 * `approved: true` allows the tool for the rest of the session), `{ reply }` or `{ handoff, reason? }`
 * (a `human_step`).
 */
export const AnswerBody = z
  .strictObject({
    text: z.string().optional(),
    approved: z.boolean().optional(),
    always: z
      .literal('session', { error: "expected 'session' (allow the tool for the rest of the session)" })
      .optional(),
    reason: z.string().optional(),
    reply: z.string().optional(),
    handoff: z.string().optional(),
  })
  .superRefine((body, context) => {
    const given = (['text', 'approved', 'reply', 'handoff'] as const).filter((key) => body[key] !== undefined);
    if (given.length !== 1) {
      context.addIssue({
        code: 'custom',
        path: given.length === 0 ? ['text'] : [given[1]!],
        message: `give exactly one of text, approved, reply, handoff (got ${given.length === 0 ? 'none' : given.join(', ')})`,
      });
    }
    if (body.always !== undefined && body.approved !== true) {
      const message = 'always goes with approved: true only (a rejection grants nothing)';
      context.addIssue({ code: 'custom', path: ['always'], message });
    }
  });

/** `POST /sessions/:id/close`: `{ reason? }`. */
export const CloseBody = z.strictObject({ reason: z.string().max(500).optional() });

/** `POST /sessions/:id/fork`: `{ branchId, atSeq }` (the branch forked is `?branch=`, default `main`). */
export const ForkBody = z.strictObject({ branchId: id, atSeq: z.number().int().min(0) });

/**
 * `POST /sessions/:id/chat`: the body `useChat` (Vercel AI SDK) sends, `{ id?, messages, trigger?, … }`;
 * the last message must be the user's, and its text parts are what is sent.
 */
export const ChatBody = z.looseObject({
  messages: z
    .array(
      z.looseObject({
        role: z.enum(['system', 'user', 'assistant']),
        parts: z.array(
          z.looseObject({
            type: z.string(),
            text: z.string().optional(),
            // A file part (AI SDK v5 `FileUIPart`): its type, name and a `data:` URL or a URL of an asset.
            mediaType: z.string().optional(),
            filename: z.string().optional(),
            url: z.string().optional(),
          }),
        ),
      }),
    )
    .min(1),
});

/** A file part of a `useChat` message: `index` is its place among the message's parts. */
export interface ChatFilePart {
  index: number;
  mediaType: string;
  filename?: string;
  url: string;
}

/**
 * The text and file parts of the last message of a `useChat` body.
 * @throws {HttpError} `INVALID_BODY` (400) when it is not the user's, has no text, or a file part lacks
 *   `url` or `mediaType`
 * @example
 * ```ts
 * const { text, files } = lastUserMessage(await readBody(c.req.raw, ChatBody));
 * ```
 */
export function lastUserMessage(body: z.output<typeof ChatBody>): { text: string; files: ChatFilePart[] } {
  const text = lastUserText(body);
  const at = body.messages.length - 1;
  const files = body.messages[at]!.parts.flatMap((part, index): ChatFilePart[] => {
    if (part.type !== 'file') return [];
    if (part.url === undefined || part.mediaType === undefined) {
      const path = ['messages', at, 'parts', index, part.url === undefined ? 'url' : 'mediaType'];
      const message = 'a file part needs its url and mediaType';
      throw new HttpError(400, 'INVALID_BODY', `Invalid request body: ${path.join('.')}: ${message}.`, [
        { path, message, code: 'custom' },
      ]);
    }
    const file: ChatFilePart = { index, mediaType: part.mediaType, url: part.url };
    if (part.filename !== undefined) file.filename = part.filename;
    return [file];
  });
  return { text, files };
}

/** The text of the last message of a `useChat` body. @throws {HttpError} (400) when it is not the user's, or has no text */
export function lastUserText(body: z.output<typeof ChatBody>): string {
  const last = body.messages.at(-1)!;
  const text = last.parts
    .flatMap((part) => (part.type === 'text' && typeof part.text === 'string' ? [part.text] : []))
    .join('');
  if (last.role !== 'user' || text.trim() === '') {
    const path = ['messages', body.messages.length - 1, last.role !== 'user' ? 'role' : 'parts'];
    throw new HttpError(
      400,
      'INVALID_BODY',
      `Invalid request body: ${path.join('.')}: the last message must be the user's, with text.`,
      [{ path, message: "the last message must be the user's, with text", code: 'custom' }],
    );
  }
  return text;
}

/**
 * Reads the request's JSON body and validates it.
 *
 * @throws {HttpError} `INVALID_JSON` (400) when the body is not JSON; `INVALID_BODY` (400) with the
 *   zod issues when it fails the schema, the message naming each field (`text: Invalid input: expected string, received number`)
 */
export async function readBody<TSchema extends z.ZodType>(
  request: Request,
  schema: TSchema,
  options: { optional?: boolean } = {},
): Promise<z.output<TSchema>> {
  const raw = await request.text();
  let json: unknown;
  try {
    json = raw.trim() === '' && options.optional === true ? {} : JSON.parse(raw);
  } catch (error) {
    throw new HttpError(
      400,
      'INVALID_JSON',
      `The request body is not JSON (${error instanceof Error ? error.message : String(error)}); send Content-Type: application/json with a JSON object.`,
    );
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    // An unknown key is reported at the object's path; it is named as its own path here, so the message names the field.
    const issues = parsed.error.issues.flatMap((issue): { path: PropertyKey[]; message: string; code: string }[] =>
      issue.code === 'unrecognized_keys'
        ? issue.keys.map((key) => ({
            path: [...issue.path, key],
            message: 'unknown field (remove it)',
            code: issue.code,
          }))
        : [{ path: issue.path, message: issue.message, code: issue.code }],
    );
    const described = issues
      .map((issue) => `${issue.path.length === 0 ? '(body)' : issue.path.join('.')}: ${issue.message}`)
      .join('; ');
    throw new HttpError(400, 'INVALID_BODY', `Invalid request body: ${described}.`, issues);
  }
  return parsed.data;
}
