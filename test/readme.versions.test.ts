/**
 * The versioned-formats examples of the core and store-mongo READMEs work as written: each is the
 * file the test runs (checked character for character), and running it prints what the README says.
 */
import { readFile } from 'node:fs/promises';
import { MongoClient } from 'mongodb';
import { expect, test, vi } from 'vitest';
import { mongoTestUrl } from './support/mongoTestUrl.js';
import { codeBlockAfter } from './support/readmeCode.js';

async function printedBy(module: string): Promise<unknown[][]> {
  const printed: unknown[][] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
    printed.push(args);
  });
  try {
    await import(module);
  } finally {
    log.mockRestore();
  }
  return printed;
}

test("core README's versioned-formats example: a version-1 session loads, a newer one is refused by name", async () => {
  const block = await codeBlockAfter(
    new URL('../packages/core/README.md', import.meta.url),
    '## Versioned formats',
    'ts',
  );
  expect(await readFile(new URL('./examples/versionedFormatsExample.ts', import.meta.url), 'utf8')).toBe(block);
  expect(await printedBy('./examples/versionedFormatsExample.js')).toEqual([
    ['chat-1'],
    [2],
    ['UNSUPPORTED_SCHEMA_VERSION', 3, 2],
  ]);
});

test("store-mongo README's versioned-documents example: init() and migrate() give version-1 documents their tenant", async () => {
  const block = await codeBlockAfter(
    new URL('../packages/store-mongo/README.md', import.meta.url),
    '## Versioned documents',
    'ts',
  );
  expect(await readFile(new URL('./examples/mongoVersionsExample.ts', import.meta.url), 'utf8')).toBe(block);
  const client = new MongoClient(mongoTestUrl());
  const db = client.db('readme_versions');
  try {
    // A database of version 1: a tenant's session whose message has no tenantId.
    await db.collection('baton_sessions').insertOne({
      _id: 'chat-81' as never,
      id: 'chat-81',
      tenantId: 'acme',
      status: 'active',
      createdAt: '2026-01-01T10:00:00.000Z',
      lastActivityAt: '2026-01-01T10:00:00.000Z',
      metadata: {},
      state: {},
      version: 1,
    });
    await db.collection('baton_branches').insertOne({
      _id: 'chat-81/main' as never,
      id: 'main',
      sessionId: 'chat-81',
      createdAt: '2026-01-01T10:00:00.000Z',
      state: {},
      version: 1,
    });
    await db.collection('baton_messages').insertOne({
      _id: 'chat-81/main/1' as never,
      sessionId: 'chat-81',
      branchId: 'main',
      id: 'm-1',
      seq: 1,
      role: 'user',
      content: 'Hello',
      createdAt: '2026-01-01T10:00:01.000Z',
    });
    const before = process.env.MONGODB_URL;
    process.env.MONGODB_URL = mongoTestUrl();
    let printed: unknown[][];
    try {
      printed = await printedBy('./examples/mongoVersionsExample.js');
    } finally {
      if (before === undefined) delete process.env.MONGODB_URL;
      else process.env.MONGODB_URL = before;
    }
    expect(printed).toEqual([
      [[{ seq: 1, content: 'Hello' }]],
      [{ messages: 0, branches: 0, checkpoints: 0, pendingWrites: 0 }],
    ]);
    expect(await db.collection('baton_messages').findOne({ _id: 'chat-81/main/1' as never })).toMatchObject({
      tenantId: 'acme',
    });
  } finally {
    await db.dropDatabase();
    await client.close();
  }
});
