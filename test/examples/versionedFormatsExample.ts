import { UnsupportedSchemaVersionError } from '@baton/core';
import { migrateDocument, parseStoredSession, SCHEMA_VERSIONS } from '@baton/core/store-kit';

// A session document written before documents carried schemaVersion (version 1) still loads:
const v1 = { id: 'chat-1', status: 'active', createdAt: '2026-01-01T10:00:00.000Z', lastActivityAt: '2026-01-01T10:00:00.000Z', metadata: {}, state: {}, version: 1 };
console.log(parseStoredSession(v1, 'sessions/chat-1/session.json').id); // chat-1 (no schemaVersion on the result)
console.log(migrateDocument('session', v1, 'sessions/chat-1/session.json')?.schemaVersion); // 2, what stores write now

// One written by a newer Baton is refused by name, never misread:
try {
  parseStoredSession({ ...v1, schemaVersion: SCHEMA_VERSIONS.session + 1 }, 'sessions/chat-1/session.json');
} catch (error) {
  if (error instanceof UnsupportedSchemaVersionError) console.log(error.code, error.version, error.supported); // UNSUPPORTED_SCHEMA_VERSION 3 2
}
