import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidInputError, NotFoundError } from '@baton/core';
import { DEMO_DATA_FILE } from '@baton/example-support-desk/data/dataSource.js';
import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import { customerMessages, loadConversations, openingText } from '@baton/support-desk-models';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'support-desk-data-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const line = (id: string, turns: Array<[string, string]> = [['customer', 'Hi']]) =>
  JSON.stringify({
    id,
    flow: 'order_issue',
    subflow: 'manage_cancel',
    turns: turns.map(([role, text]) => ({ role, text })),
  });

describe('loadConversations', () => {
  it('reads the demo conversations shipped with the example: 82, 8 per flow (10 for purchase_dispute), on subflows the ontology knows', async () => {
    const conversations = await loadConversations(DEMO_DATA_FILE);
    expect(conversations).toHaveLength(82);
    const ontology = loadOntology();
    const perFlow = new Map<string, number>();
    for (const c of conversations) perFlow.set(c.flow, (perFlow.get(c.flow) ?? 0) + 1);
    expect([...perFlow.keys()].sort()).toEqual([...ontology.flows].sort());
    expect(Object.fromEntries(perFlow)).toEqual(
      Object.fromEntries(ontology.flows.map((flow) => [flow, flow === 'purchase_dispute' ? 10 : 8])),
    );
    expect(conversations.every((c) => ontology.flowOf(c.subflow) === c.flow)).toBe(true);
    expect(new Set(conversations.map((c) => c.subflow)).size).toBeGreaterThanOrEqual(30);
    // Some customers only greet at first and say what they need in their second message.
    const greetingFirst = conversations.filter(
      (c) => /^(hi|hello|hey)\b/i.test(customerMessages(c)[0] ?? '') && customerMessages(c)[0]!.length < 20,
    );
    expect(greetingFirst.length).toBeGreaterThanOrEqual(5);
    // Refunds, identity checks and account look-ups are logged as the agent console's actions.
    const actions = conversations.flatMap((c) => c.turns.filter((t) => t.role === 'action').map((t) => t.text));
    for (const log of [
      'Account has been pulled up for',
      'Identity verification in progress',
      'Purchase validation in progress',
      'A refund has been made for the amount of $',
    ]) {
      expect(actions.some((text) => text.startsWith(log))).toBe(true);
    }
  });

  it('says what format it expects when the file is missing, and nothing about where a sample might be kept', async () => {
    const missing = join(dir, 'nope.jsonl');
    const error = await loadConversations(missing).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as Error).message).toContain(`No conversation file at ${missing}.`);
    expect((error as Error).message).toContain(
      'one {"id", "flow", "subflow", "turns": [{"role": "customer" | "agent" | "action", "text"}]} object per line',
    );
    expect((error as Error).message).toContain('pnpm abcd:import');
    expect((error as Error).message).not.toContain('shared');
  });

  it('names the line that is not JSON', async () => {
    const file = join(dir, 'broken.jsonl');
    await writeFile(file, `${line('a')}\n{"id": "b", oops\n`);
    await expect(loadConversations(file)).rejects.toThrow(InvalidInputError);
    await expect(loadConversations(file)).rejects.toThrow(`${file}:2 is not valid JSON`);
  });

  it('names the line and the field that is not a conversation', async () => {
    const file = join(dir, 'shape.jsonl');
    await writeFile(
      file,
      `${line('a')}\n${JSON.stringify({ id: 'b', flow: 'x', subflow: 'y', turns: [{ role: 'robot', text: 'beep' }] })}\n`,
    );
    await expect(loadConversations(file)).rejects.toThrow(
      /shape\.jsonl:2 is not an ABCD conversation \(turns\.0\.role/,
    );
  });

  it('refuses a repeated id and an empty file', async () => {
    const repeated = join(dir, 'repeated.jsonl');
    await writeFile(repeated, `${line('a')}\n\n${line('a')}\n`);
    await expect(loadConversations(repeated)).rejects.toThrow('repeated.jsonl:3 repeats the conversation id "a"');
    const empty = join(dir, 'empty.jsonl');
    await writeFile(empty, '\n');
    await expect(loadConversations(empty)).rejects.toThrow('holds no conversation');
  });

  it('takes any file of the same format', async () => {
    const file = join(dir, 'mine.jsonl');
    await writeFile(
      file,
      `${line('x-1', [
        ['agent', 'Hello'],
        ['customer', 'Cancel my order'],
        ['customer', 'please'],
        ['action', 'Account has been pulled up'],
        ['customer', 'Joyce Wu'],
      ])}\n`,
    );
    const [conversation] = await loadConversations(file);
    expect(customerMessages(conversation!)).toEqual(['Cancel my order', 'please', 'Joyce Wu']);
    expect(openingText(conversation!)).toBe('Cancel my order\nplease');
  });
});
