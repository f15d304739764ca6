/**
 * `baton inspect` on a session stored under a tenant (as the web chat stores its sessions): without
 * `--tenant` the error says how to pass one; with it the timeline prints.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runProgram } from '@baton/cli';
import { agent, FileStore } from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { HandoffBuilder } from '@baton/handoff';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'baton-inspect-tenant-'));
  const store = new FileStore({ directory: dir });
  const helper = agent({
    name: 'helper',
    description: 'helps',
    instructions: 'Help.',
    model: new ScriptedModel(() => ({ text: 'Hello!' })),
  });
  const session = await new HandoffBuilder()
    .participants(helper)
    .store(store)
    .build()
    .session({ id: 'web-1', tenantId: 'acme-web', userId: 'u-1' });
  for await (const _ of session.send('Hi')) void _;
  await store.close();
});

afterAll(() => rm(dir, { recursive: true, force: true }));

async function baton(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runProgram(['node', 'baton', ...args], { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('baton inspect on a tenant’s session', () => {
  it('without --tenant says how to pass one; with it prints the timeline', async () => {
    const missing = await baton('inspect', '--store', `file:${dir}`, '--session', 'web-1', '--out', join(dir, 'out'));
    expect(missing.code).toBe(1);
    expect(missing.err).toBe(
      'NotFoundError: Session "web-1" does not exist in this store without a tenant. ' +
        'A session stored under a tenant (as the web chat stores its sessions) is found with --tenant ID.',
    );
    const found = await baton(
      'inspect',
      '--store',
      `file:${dir}`,
      '--session',
      'web-1',
      '--tenant',
      'acme-web',
      '--out',
      join(dir, 'out'),
    );
    expect(found).toMatchObject({ code: 0, err: '' });
    expect(found.out).toMatch(/^session web-1 {2}branch main {2}active/);
    // A wrong tenant is told plainly, without the hint (the caller did pass one).
    const wrong = await baton(
      'inspect',
      '--store',
      `file:${dir}`,
      '--session',
      'web-1',
      '--tenant',
      'other',
      '--out',
      join(dir, 'out'),
    );
    expect(wrong).toMatchObject({ code: 1, err: 'NotFoundError: Session "web-1" does not exist in this store.' });
  });
});
