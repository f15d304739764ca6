/**
 * What strict reads cost per document: the check a store runs on every message it reads
 * (parseStoredMessage: the fast pre-check, the ISO-8601 test of createdAt, no unknown keys) against
 * zod's MessageSchema.parse (what FileStore ran per line before), and the check of a session
 * change (once per updateSession, so once per turn). Prints operations per second.
 *
 *   npx vitest bench --run --project @baton/core test/bench/storedDocuments.bench.ts
 */
import { bench, describe } from 'vitest';
import { MessageSchema } from '../../src/index.js';
import { assertSessionChange, parseStoredMessage, parseStoredSession } from '../../src/store-kit/index.js';

const message = {
  id: '019a8f4e-0000-7000-8000-000000000001',
  seq: 41,
  role: 'assistant',
  content: 'Your refund is on its way.',
  agent: 'billing',
  createdAt: '2026-01-01T00:00:00.000Z',
};
const toolResult = {
  id: '019a8f4e-0000-7000-8000-000000000002',
  seq: 42,
  role: 'tool',
  content: 'Transferred to billing.',
  toolCallId: 'call-1',
  toolName: 'handoff_to_billing',
  isError: false,
  durationMs: 0.4,
  createdAt: '2026-01-01T00:00:00.000Z',
  metadata: { control: { kind: 'handoff', target: 'billing' } },
};
const session = {
  id: 'chat-1',
  tenantId: 'acme',
  userId: 'u-1',
  status: 'active',
  createdAt: '2026-01-01T00:00:00.000Z',
  lastActivityAt: '2026-01-01T00:10:00.000Z',
  metadata: { channel: 'web' },
  state: { verified: true },
  version: 12,
};
const change = { lastActivityAt: '2026-01-01T00:10:00.000Z', state: { verified: true, plan: { step: 2 } } };

describe('per message read', () => {
  bench('parseStoredMessage (assistant message)', () => {
    parseStoredMessage(message, 'bench');
  });
  bench('parseStoredMessage (tool result with metadata)', () => {
    parseStoredMessage(toolResult, 'bench');
  });
  bench('MessageSchema.parse (zod, assistant message)', () => {
    MessageSchema.parse(message);
  });
});

describe('per session read and update', () => {
  bench('parseStoredSession', () => {
    parseStoredSession(session, 'bench');
  });
  bench('assertSessionChange', () => {
    assertSessionChange(change);
  });
});
