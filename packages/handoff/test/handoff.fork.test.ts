import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BranchHasChildrenError, FileStore, InvalidInputError } from '@baton/core';
import { afterEach, describe, expect, it } from 'vitest';
import { HandoffBuilder } from '../src/index.js';
import { collect, deskAgents, tempDir } from './support/helpers.js';

/** Every file under `dir`, as text. */
async function allFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out.push(await readFile(join(entry.parentPath, entry.name), 'utf8'));
  }
  return out;
}

describe('branches (Done-when 6)', () => {
  let dispose: (() => Promise<void>) | undefined;
  afterEach(async () => dispose?.());

  it('a fork at seq k reads the parent’s first k messages by reference and then runs on its own', async () => {
    const dir = await tempDir();
    dispose = dir.dispose;
    const { triage, billing } = deskAgents();
    const store = new FileStore({ directory: dir.path });
    const workflow = new HandoffBuilder().participants(triage, billing).store(store).build();
    const main = await workflow.session({ id: 'f-1' });
    await collect(main.send('First question'));
    await collect(main.send('Second question'));
    expect(main.messages).toHaveLength(8);

    const alt = await main.fork({ atSeq: 4, branchId: 'alt' });
    expect(alt.branchId).toBe('alt');
    expect(alt.messages.map((m) => m.id)).toEqual(main.messages.slice(0, 4).map((m) => m.id));
    expect(alt.activeAgent).toBe('triage');
    expect(alt.routingState).toBe('idle');

    await collect(alt.send('A different second question'));
    const altStored = await store.readMessages('f-1', 'alt');
    expect(altStored.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(altStored[4]!.content).toBe('A different second question');
    expect(altStored[7]!.content).toBe('Answer to: A different second question');
    expect((await store.readMessages('f-1', 'main')).map((m) => m.id)).toEqual(main.messages.map((m) => m.id));

    // The store holds each of the shared messages once (the fork copied none); checkpoints hold none.
    const files = await allFiles(dir.path);
    for (const message of main.messages.slice(0, 4)) {
      expect(files.reduce((n, text) => n + text.split(message.id).length - 1, 0)).toBe(1);
    }
    expect((await main.branches()).map((b) => [b.id, b.parent ?? null])).toEqual([
      ['main', null],
      ['alt', { branchId: 'main', atSeq: 4 }],
    ]);
    await store.close();
  });

  it('refuses a fork point between a tool call and its result, or past the head', async () => {
    const { triage, billing } = deskAgents();
    const main = await new HandoffBuilder().participants(triage, billing).build().session({ id: 'f-2' });
    await collect(main.send('Question'));
    await expect(main.fork({ atSeq: 2, branchId: 'bad' })).rejects.toThrow(InvalidInputError);
    await expect(main.fork({ atSeq: 2, branchId: 'bad' })).rejects.toThrow(/between the tool calls of message 2/);
    await expect(main.fork({ atSeq: 9, branchId: 'bad' })).rejects.toThrow(/from 0 to 4/);
    expect((await main.branches()).map((b) => b.id)).toEqual(['main']);
  });

  it('refuses to delete a branch that has forks unless recursive', async () => {
    const { triage, billing } = deskAgents();
    const main = await new HandoffBuilder().participants(triage, billing).build().session({ id: 'f-3' });
    await collect(main.send('Question'));
    const alt = await main.fork({ atSeq: 1, branchId: 'alt' });
    await collect(alt.send('Go on'));
    await alt.fork({ atSeq: 3, branchId: 'alt-2' });
    await expect(main.deleteBranch('alt')).rejects.toThrow(BranchHasChildrenError);
    expect((await main.branches()).map((b) => b.id)).toEqual(['main', 'alt', 'alt-2']);
    await main.deleteBranch('alt', { recursive: true });
    expect((await main.branches()).map((b) => b.id)).toEqual(['main']);
  });
});
