/**
 * `baton store verify|repair --store file:DIR --session ID` on a FileStore session log with a
 * damaged record: verify names the record and exits 1, repair keeps the records before it and
 * moves the damaged file aside, and the session reads again; an intact log verifies with exit 0.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runProgram } from '@baton/cli';
import { createId, FileStore, type Message } from '@baton/core';
import { afterAll, describe, expect, it } from 'vitest';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const message = (seq: number): Message => ({
  id: createId(),
  seq,
  role: seq % 2 ? 'user' : 'assistant',
  content: `message ${seq}`,
  createdAt: new Date().toISOString(),
});

async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runProgram(['node', 'baton', ...args], {
    out: (text) => out.push(text),
    err: (text) => err.push(text),
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('baton store verify|repair', () => {
  it('names the damaged record, salvages the records before it, and keeps the damaged file', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'baton-cli-store-'));
    dirs.push(directory);
    const store = new FileStore({ directory });
    await store.createSession({ id: 'chat-1' });
    for (let seq = 1; seq <= 10; seq += 1) await store.appendMessages('chat-1', 'main', [message(seq)]);
    await store.close();

    const spec = `file:${directory}`;
    expect(await run('store', 'verify', '--store', spec, '--session', 'chat-1')).toMatchObject({
      code: 0,
      out: expect.stringMatching(/ok: 13 records intact \(main through seq 10\)/),
    });

    // Line 9 (seq 6) damaged: one byte of its message flipped.
    const file = join(directory, 'sessions', 'chat-1', 'log.jsonl');
    const bytes = await readFile(file);
    const lines = bytes.toString('utf8').split('\n');
    const at = lines.slice(0, 8).join('\n').length + 1 + lines[8]!.indexOf('message 6');
    bytes[at + 'message '.length] = '9'.charCodeAt(0);
    await writeFile(file, bytes);

    const verify = await run('store', 'verify', '--store', spec, '--session', 'chat-1');
    expect(verify.code).toBe(1);
    expect(verify.out).toMatch(/damaged: record 9 \(line 9, byte \d+\); 4 records after it/);
    expect(verify.out).toMatch(/intact: 8 records before it \(main through seq 5\)/);
    expect(verify.err).toMatch(/LogRecordCorruptError: The session log of chat-1 is damaged at record 9/);
    await expect(new FileStore({ directory }).readMessages('chat-1', 'main')).rejects.toThrow(
      /line 9 of .*log\.jsonl is damaged \(its CRC-32C is/,
    );

    const repair = await run('store', 'repair', '--store', spec, '--session', 'chat-1');
    expect(repair.code).toBe(0);
    const movedTo = /the damaged log was kept as (\S+)/.exec(repair.out)?.[1];
    expect(await readFile(movedTo!)).toEqual(bytes);
    const salvaged = new FileStore({ directory });
    expect((await salvaged.readMessages('chat-1', 'main')).map((m) => m.content)).toEqual(
      [1, 2, 3, 4, 5].map((seq) => `message ${seq}`),
    );
    expect(await salvaged.appendMessages('chat-1', 'main', [message(6)])).toEqual({ inserted: 1 });
    expect((await run('store', 'verify', '--store', spec, '--session', 'chat-1')).code).toBe(0);
  });

  it('refuses a store that keeps no session log, and an unknown session, with a named error', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'baton-cli-store-'));
    dirs.push(directory);
    expect(await run('store', 'verify', '--store', 'mongodb://127.0.0.1:1/x', '--session', 'chat-1')).toMatchObject({
      code: 1,
      err: expect.stringMatching(/InvalidInputError: .*Pass --store file:DIR/),
    });
    expect(await run('store', 'repair', '--store', `file:${directory}`, '--session', 'nope')).toMatchObject({
      code: 1,
      err: expect.stringMatching(/NotFoundError: Session "nope" does not exist/),
    });
  });
});
