/**
 * Session assets end to end: a user uploads a file during a conversation (`session.attach`), sends
 * a message that refers to it (`send(text, { assets })`), and an agent's tool reads the bytes by the
 * id the model saw (`context.assets`); the message and the checkpoints hold the reference, never the
 * bytes; a restarted process reads the asset again; `eraseUser` removes it.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type AssetRef,
  assetRefsOf,
  ConfigurationError,
  FileStore,
  InMemoryStore,
  InvalidInputError,
  NotFoundError,
  type Store,
} from '@baton/core';
import { afterEach, describe, expect, it } from 'vitest';
import { expensesWorkflow, READ, RECEIPT } from './support/expensesDesk.js';
import { collect, ofType, tempDir } from './support/helpers.js';

describe('session assets in a conversation', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  it('uploads during a conversation, a tool reads it by reference, a restart keeps it, eraseUser removes it', async () => {
    const dir = await tempDir('baton-assets-');
    cleanups.push(dir.dispose);
    const owner = { tenantId: 'acme', userId: 'u-7' };
    const first = new FileStore({ directory: dir.path });
    const { workflow, seen } = expensesWorkflow(first);
    const session = await workflow.session({ id: 'expense-1', ...owner });

    const receipt = await session.attach({
      name: 'receipt.txt',
      contentType: 'text/plain; charset=utf-8',
      bytes: Buffer.from(RECEIPT),
    });
    expect(receipt).toMatchObject({
      sessionId: 'expense-1',
      name: 'receipt.txt',
      contentType: 'text/plain; charset=utf-8',
      size: Buffer.byteLength(RECEIPT),
    });
    const events = await collect(session.send('Please file my lunch receipt', { assets: [receipt] }));

    // The model saw the text and a line naming the asset; the tool read the bytes through context.assets.
    expect(seen).toEqual([
      `Please file my lunch receipt\n\n[Attached asset ${receipt.id}: receipt.txt (text/plain; charset=utf-8, ${receipt.size} bytes)]`,
    ]);
    expect(ofType(events, 'tool.result').map((e) => e.content)).toEqual([READ]);
    expect(ofType(events, 'message').at(-1)?.message.content).toBe(`Filed: ${READ}`);

    // The user message holds the reference; the stored text and checkpoints never hold the bytes.
    const [user] = await first.readMessages('expense-1', 'main', { tenantId: 'acme' });
    expect(user?.content).toBe('Please file my lunch receipt');
    expect(assetRefsOf(user!)).toEqual([receipt]);
    const checkpoint = await first.loadCheckpoint('expense-1', 'main', undefined, { tenantId: 'acme' });
    expect(JSON.stringify(checkpoint)).not.toContain('ACME Café');
    const log = await readFile(join(dir.path, 'sessions', 'expense-1', 'log.jsonl'), 'utf8');
    expect(log).not.toContain('ACME Café');
    expect((await readdir(join(dir.path, 'sessions', 'expense-1', 'assets'))).sort()).toEqual([
      `${receipt.id}.bin`,
      `${receipt.id}.json`,
    ]);
    await first.close();

    // A new process: the asset is listed and read again, and a later turn's tool reads it.
    const second = new FileStore({ directory: dir.path });
    const reopened = await expensesWorkflow(second).workflow.session({ id: 'expense-1', ...owner });
    expect(await reopened.assets.list()).toEqual([receipt]);
    expect(Buffer.from((await reopened.assets.get(receipt.id))!.bytes).toString('utf8')).toBe(RECEIPT);
    const again = await collect(reopened.send('File it once more', { assets: [receipt] }));
    expect(ofType(again, 'tool.result').map((e) => e.content)).toEqual([READ]);

    // Erasing the user removes the asset with the session, and counts it.
    expect(await second.eraseUser(owner)).toMatchObject({ sessions: 1, assets: 1 });
    await expect(second.listAssets('expense-1', { tenantId: 'acme' })).rejects.toBeInstanceOf(NotFoundError);
    expect(await readdir(join(dir.path, 'sessions'))).toEqual([]);
    await second.close();
  });

  it("refuses references that are not this session's assets, and a store without assets, with named errors", async () => {
    const store = new InMemoryStore();
    const { workflow } = expensesWorkflow(store);
    const session = await workflow.session({ id: 'expense-2' });
    const other = await workflow.session({ id: 'expense-3' });
    const foreign: AssetRef = await other.attach({
      name: 'other.txt',
      contentType: 'text/plain',
      bytes: Buffer.from('x'),
    });
    await expect(collect(session.send('Mine?', { assets: [foreign] }))).rejects.toBeInstanceOf(InvalidInputError);
    await expect(
      collect(session.send('Mine?', { assets: [{ id: '../../etc/passwd' } as unknown as AssetRef] })),
    ).rejects.toBeInstanceOf(InvalidInputError);
    expect(session.messages).toEqual([]);

    const bare = Object.assign(new InMemoryStore(), { putAsset: undefined }) as Store;
    const plain = await expensesWorkflow(bare).workflow.session({ id: 'expense-4' });
    await expect(
      plain.attach({ name: 'a.txt', contentType: 'text/plain', bytes: Buffer.from('a') }),
    ).rejects.toBeInstanceOf(ConfigurationError);
    expect(() => plain.assets).toThrow(ConfigurationError);
  });
});
