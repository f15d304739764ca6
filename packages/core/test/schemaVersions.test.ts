/**
 * The persisted formats are versioned: a loader brings an older document up to the current
 * version step by step, reads a document without `schemaVersion` as version 1, and refuses a newer
 * one with a named error instead of misreading it.
 */
import { describe, expect, it } from 'vitest';
import {
  CheckpointCorruptError,
  type DocumentCorruptError,
  parseCheckpoint,
  StoreError,
  UnsupportedSchemaVersionError,
} from '../src/index.js';
import {
  type MigrationRegistry,
  migrateDocument,
  migrateFields,
  parseStoredBranch,
  parseStoredEpisode,
  parseStoredMessage,
  parseStoredSession,
  SCHEMA_VERSIONS,
  withSchemaVersion,
} from '../src/store-kit/index.js';
import { makeCheckpoint } from './support/storeFixtures.js';

const session = {
  id: 'chat-1',
  userId: 'u-1',
  status: 'active',
  createdAt: '2026-01-01T10:00:00.000Z',
  lastActivityAt: '2026-01-01T10:05:00.000Z',
  metadata: {},
  state: { verified: true },
  version: 3,
};
const branch = { id: 'main', sessionId: 'chat-1', createdAt: '2026-01-01T10:00:00.000Z', state: {}, version: 1 };
const message = {
  id: 'm-1',
  seq: 1,
  role: 'user',
  content: 'I was charged twice',
  createdAt: '2026-01-01T10:00:01.000Z',
};
const episode = {
  id: 'chat-1',
  sessionId: 'chat-1',
  startedAt: '2026-01-01T10:00:00.000Z',
  endedAt: '2026-01-01T10:05:00.000Z',
  closedReason: 'resolved',
  agents: ['triage'],
  transcript: [{ role: 'user', content: 'I was charged twice' }],
  summary: 'A double charge.',
  keywords: ['charge'],
};

const parsers = [
  ['session', session, parseStoredSession],
  ['branch', branch, parseStoredBranch],
  ['message', message, parseStoredMessage],
  ['episode', episode, parseStoredEpisode],
] as const;

describe('versioned stored documents', () => {
  for (const [kind, fields, parse] of parsers) {
    it(`reads a ${kind} of version 1 (no schemaVersion) and of the current version to the same ${kind}, without schemaVersion`, () => {
      const fromV1 = parse(fields, `${kind} v1`);
      const fromCurrent = parse(withSchemaVersion(kind, fields), `${kind} v${SCHEMA_VERSIONS[kind]}`);
      expect(fromV1).toEqual(fields);
      expect(fromCurrent).toEqual(fields);
      expect(fromCurrent).not.toHaveProperty('schemaVersion');
    });

    it(`refuses a ${kind} of a newer schemaVersion with UnsupportedSchemaVersionError naming the document and both versions`, () => {
      const newer = SCHEMA_VERSIONS[kind] + 1;
      const error = (() => {
        try {
          parse({ ...fields, schemaVersion: newer }, `${kind} document "x"`);
        } catch (caught) {
          return caught;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(UnsupportedSchemaVersionError);
      expect(error).toBeInstanceOf(StoreError);
      expect(error).toMatchObject({
        code: 'UNSUPPORTED_SCHEMA_VERSION',
        kind,
        version: newer,
        supported: SCHEMA_VERSIONS[kind],
        document: `${kind} document "x"`,
      });
      expect((error as Error).message).toContain(`schemaVersion ${newer}`);
    });

    it(`refuses a ${kind} whose schemaVersion is not a version with DocumentCorruptError at schemaVersion`, () => {
      for (const bad of ['2', 0, 1.5, null]) {
        expect(() => parse({ ...fields, schemaVersion: bad }, kind)).toThrow(
          expect.objectContaining({ name: 'DocumentCorruptError', field: 'schemaVersion' }) as DocumentCorruptError,
        );
      }
    });
  }

  it('stamps the current version when a store writes a document', () => {
    expect(withSchemaVersion('message', message)).toEqual({ schemaVersion: SCHEMA_VERSIONS.message, ...message });
    expect(SCHEMA_VERSIONS).toEqual({ session: 2, branch: 2, message: 2, episode: 2, checkpoint: 1 });
  });

  it('reads a checkpoint without schemaVersion as version 1 and refuses a newer one by name', () => {
    const { schemaVersion: _version, ...unversioned } = makeCheckpoint('chat-1');
    expect(parseCheckpoint(unversioned)).toEqual({ ...unversioned, schemaVersion: 1 });
    expect(() => parseCheckpoint({ ...unversioned, schemaVersion: 2 }, 'checkpoint "cp-9"')).toThrow(
      UnsupportedSchemaVersionError,
    );
    expect(() => parseCheckpoint({ ...unversioned, schemaVersion: 'one' })).toThrow(CheckpointCorruptError);
  });
});

describe('migration registry', () => {
  /** A registry of three versions: v2 renamed `text` to `content`, v3 added `tags`. */
  const registry: MigrationRegistry = {
    current: 3,
    steps: {
      1: ({ text, ...rest }) => ({ ...rest, content: text }),
      2: (fields) => ({ ...fields, tags: [] }),
    },
  };

  it('runs every step from the stored version to the current one, in order, without mutating the input', () => {
    const v1 = Object.freeze({ id: 'a', text: 'hi' });
    expect(migrateFields('message', v1, 'doc', registry)).toEqual({ id: 'a', content: 'hi', tags: [] });
    expect(migrateFields('message', { schemaVersion: 2, id: 'a', content: 'hi' }, 'doc', registry)).toEqual({
      id: 'a',
      content: 'hi',
      tags: [],
    });
    expect(migrateDocument('message', v1, 'doc', registry)).toEqual({
      id: 'a',
      content: 'hi',
      tags: [],
      schemaVersion: 3,
    });
    expect(v1).toEqual({ id: 'a', text: 'hi' });
  });

  it('returns a current document as it is, and refuses a newer one', () => {
    const current = { schemaVersion: 3, id: 'a', content: 'hi', tags: [] };
    expect(migrateDocument('message', current, 'doc', registry)).toBe(current);
    expect(() => migrateFields('message', { ...current, schemaVersion: 4 }, 'doc', registry)).toThrow(
      UnsupportedSchemaVersionError,
    );
  });

  it('copies nothing for a version-1 document whose steps change no field', () => {
    expect(migrateFields('message', message, 'doc')).toBe(message);
  });
});
