/**
 * `chat` in a real terminal: the CLI runs under `script`, which gives it a pseudo-terminal, and the
 * test types into that terminal as a user would. In a terminal, readline switches off the terminal's
 * own echo, so what the user types shows only when the chat echoes it.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileStore } from '@baton/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_DATA_FILE } from '../src/data/dataSource.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const tsx = fileURLToPath(new URL('../../../node_modules/.bin/tsx', import.meta.url));
// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escape sequences
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'support-desk-pty-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * Resolves once the terminal's output (escape sequences removed) satisfies `done`; rejects after 50 s
 * (the first prompt follows a tsx start-up and the offline models' training: 3 s idle, many times that
 * on a loaded 2-core machine).
 */
function waitFor(
  child: ChildProcessWithoutNullStreams,
  screen: { text: string },
  done: (text: string) => boolean,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out; the terminal shows:\n${screen.text}`)), 50_000);
    const check = () => {
      if (!done(screen.text)) return;
      clearTimeout(timer);
      child.stdout.off('data', check);
      resolve();
    };
    child.stdout.on('data', check);
    check();
  });
}

describe('chat in a terminal', () => {
  it('echoes what the user types, answers, and closes the session on /quit', async () => {
    const command = `${tsx} --conditions=source src/cli.ts chat --store-dir ${join(dir, 'store')}`;
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      cwd: root,
      env: { ...process.env, OPENAI_API_KEY: '', MONGODB_URL: '', BATON_ABCD: DEMO_DATA_FILE },
    });
    const screen = { text: '' };
    child.stdout.on('data', (data: Buffer) => {
      screen.text += data.toString().replace(ANSI, '');
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      await waitFor(child, screen, (text) => text.includes('you> '));
      child.stdin.write('I forgot my password\r');
      await waitFor(child, screen, (text) => text.split('you> ').length > 2);
      child.stdin.write('/quit\r');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
    const lines = screen.text.split(/\r?\n|\r/).filter((line) => line.trim() !== '');
    expect(lines[0]).toBe(
      'Data: demo conversations (82, examples/support-desk/conversations/demo.jsonl), what the offline models learn from',
    );
    // The typed line is on the screen once, after the prompt, and the desk's answer follows it.
    expect(lines.filter((line) => line.includes('I forgot my password'))).toEqual(['you> I forgot my password']);
    const typed = lines.indexOf('you> I forgot my password');
    expect(lines[typed + 1]).toMatch(/↪ handoff: triage → account \(flow account_access/);
    expect(lines).toContain('you> /quit');
    expect(lines.at(-1)).toMatch(/^Session chat-\S+ closed; its episode is saved in the store\.$/);
  }, 150_000);

  it('Ctrl-C leaves the session open and says how to continue it', async () => {
    const command = `${tsx} --conditions=source src/cli.ts chat --store-dir ${join(dir, 'store')} --session pty-ctrl-c`;
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      cwd: root,
      env: { ...process.env, OPENAI_API_KEY: '', MONGODB_URL: '', BATON_ABCD: DEMO_DATA_FILE },
    });
    const screen = { text: '' };
    child.stdout.on('data', (data: Buffer) => {
      screen.text += data.toString().replace(ANSI, '');
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      await waitFor(child, screen, (text) => text.includes('you> '));
      child.stdin.write('I forgot my password\r');
      await waitFor(child, screen, (text) => text.split('you> ').length > 2);
      child.stdin.write('\u0003');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
    const lines = screen.text.split(/\r?\n|\r/).filter((line) => line.trim() !== '');
    expect(lines.at(-1)).toBe('Session pty-ctrl-c left open; continue it with --session pty-ctrl-c.');
    const store = new FileStore({ directory: join(dir, 'store') });
    expect(await store.getSession('pty-ctrl-c')).toMatchObject({ status: 'active' });
    await store.close();
  }, 150_000);
});
