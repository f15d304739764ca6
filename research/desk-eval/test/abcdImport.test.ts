import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { InvalidInputError, NotFoundError } from '@baton/core';
import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import { loadConversations } from '@baton/support-desk-models';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertAbcdSplit, readAbcdRelease } from '../src/abcdImport.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const tsx = fileURLToPath(new URL('../../../node_modules/.bin/tsx', import.meta.url));
const ontology = loadOntology();

/** A conversation as ABCD's release has it (with a field the importer does not need). */
const upstream = (convoId: number, flow: string, subflow: string, original: Array<[string, string]>) => ({
  convo_id: convoId,
  scenario: { personal: { customer_name: 'Joyce Wu' }, flow, subflow },
  original,
  delexed: [],
});
const opening = (text: string): Array<[string, string]> => [
  ['agent', 'Hello, how can I help?'],
  ['customer', text],
  ['action', 'Account has been pulled up for Joyce Wu.'],
  ['customer', 'thanks'],
];
const release = {
  train: [upstream(1, 'shipping_issue', 'status', opening('where is my package'))],
  dev: [
    upstream(7, 'account_access', 'recover_password', opening('I forgot my password')),
    upstream(12, 'single_item_query', 'jacket_how_2', opening('is the jacket warm')),
    upstream(1234, 'storewide_query', 'status_questions', opening('when do you open')),
    ...[20, 21, 22, 23, 24].map((id) =>
      upstream(id, 'account_access', 'recover_username', opening(`I lost my username, case ${id}`)),
    ),
  ],
  test: [upstream(3, 'order_issue', 'manage_cancel', opening('cancel my order'))],
};

let dir: string;
let archive: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'support-desk-import-'));
  archive = join(dir, 'abcd_v1.1.json.gz');
  await writeFile(archive, gzipSync(JSON.stringify(release)));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('convertAbcdSplit', () => {
  it("turns a split of ABCD's release into the desk's conversations", async () => {
    const imported = convertAbcdSplit(await readAbcdRelease(archive, 'dev'), { split: 'dev', ontology });
    expect(imported.total).toBe(8);
    expect(imported.skipped).toEqual({ 'storewide_query/status_questions': 1 });
    const byId = new Map(imported.conversations.map((c) => [c.id, c]));
    expect(byId.get('abcd-dev-0007')).toEqual({
      id: 'abcd-dev-0007',
      source_split: 'dev',
      flow: 'account_access',
      subflow: 'recover_password',
      subflow_raw: 'recover_password',
      turns: [
        { role: 'agent', text: 'Hello, how can I help?' },
        { role: 'customer', text: 'I forgot my password' },
        { role: 'action', text: 'Account has been pulled up for Joyce Wu.' },
        { role: 'customer', text: 'thanks' },
      ],
    });
    // ABCD's item questions name a variant; the ontology's subflow is the item.
    expect(byId.get('abcd-dev-0012')).toMatchObject({
      flow: 'single_item_query',
      subflow: 'jacket',
      subflow_raw: 'jacket_how_2',
    });
    // Ordered by flow as the ontology lists them.
    expect(imported.conversations.map((c) => c.flow)).toEqual([
      ...Array(6).fill('account_access'),
      'single_item_query',
    ]);
  });

  it('keeps a deterministic sample per flow with perFlow, whatever the order of the release', async () => {
    const dev = await readAbcdRelease(archive, 'dev');
    const sample = convertAbcdSplit(dev, { split: 'dev', ontology, perFlow: 2 }).conversations.map((c) => c.id);
    expect(sample.filter((id) => id !== 'abcd-dev-0012')).toHaveLength(2);
    expect(sample).toContain('abcd-dev-0012');
    expect(
      convertAbcdSplit([...dev].reverse(), { split: 'dev', ontology, perFlow: 2 }).conversations.map((c) => c.id),
    ).toEqual(sample);
  });

  it('names the split in the ids', async () => {
    const test = convertAbcdSplit(await readAbcdRelease(archive, 'test'), { split: 'test', ontology });
    expect(test.conversations.map((c) => [c.id, c.source_split])).toEqual([['abcd-test-0003', 'test']]);
  });

  it('refuses what is not the release, saying what it expected', async () => {
    await expect(readAbcdRelease(join(dir, 'none.json.gz'), 'dev')).rejects.toThrow(NotFoundError);
    const plain = join(dir, 'plain.json');
    await writeFile(plain, JSON.stringify(release));
    await expect(readAbcdRelease(plain, 'dev')).rejects.toThrow(InvalidInputError);
    await expect(readAbcdRelease(plain, 'dev')).rejects.toThrow(`${plain} is not a gzipped JSON file`);
    const devOnly = join(dir, 'dev-only.json.gz');
    await writeFile(devOnly, gzipSync(JSON.stringify({ dev: release.dev })));
    await expect(readAbcdRelease(devOnly, 'train')).rejects.toThrow(
      'has no "train" list of conversations (it holds: dev)',
    );
    const broken = join(dir, 'broken.json.gz');
    await writeFile(
      broken,
      gzipSync(JSON.stringify({ dev: [{ convo_id: 1, scenario: { flow: 'x' }, original: [] }] })),
    );
    await expect(readAbcdRelease(broken, 'dev')).rejects.toThrow(
      /dev\[0\] is not an ABCD conversation \(scenario\.subflow/,
    );
    const robot = convertAbcdSplit.bind(null, [upstream(5, 'order_issue', 'manage_cancel', [['robot', 'beep']])], {
      split: 'dev',
      ontology,
    });
    expect(robot).toThrow('ABCD conversation 5 has a turn by "robot"; expected customer, agent or action.');
  });
});

describe('abcd:import', () => {
  it('writes a file the desk runs on', async () => {
    const env = { ...process.env, INIT_CWD: dir, OPENAI_API_KEY: '', MONGODB_URL: '' };
    const { stdout } = await run(
      tsx,
      ['--conditions=source', 'src/cli.ts', 'import', 'abcd_v1.1.json.gz', '--split', 'dev', '--per-flow', '3'],
      { cwd: root, env },
    );
    const out = join(dir, 'abcd-dev-4.jsonl');
    expect(stdout).toContain(`Wrote 4 conversations of ABCD's dev split (8 in the release) to ${out}.`);
    expect(stdout).toContain('Skipped (flow/subflow not in the ontology): 1 × storewide_query/status_questions.');
    const conversations = await loadConversations(out);
    expect(conversations.map((c) => c.flow)).toEqual([
      'account_access',
      'account_access',
      'account_access',
      'single_item_query',
    ]);
    expect((await readFile(out, 'utf8')).split('\n')).toHaveLength(5);
    const replay = await run(
      tsx,
      ['--conditions=source', 'src/cli.ts', 'replay', '--json', '--store-dir', ':memory:'],
      { cwd: root, env: { ...env, BATON_ABCD: out } },
    );
    expect(replay.stderr.split('\n')[0]).toBe(`Data: conversations (4, ${out})`);
    expect(JSON.parse(replay.stdout).counts).toMatchObject({ conversations: 4, failed: 0 });
  }, 60_000);

  it('requires --split', async () => {
    const error = (await run(tsx, ['--conditions=source', 'src/cli.ts', 'import', archive], { cwd: root }).catch(
      (e: unknown) => e,
    )) as { code: number; stderr: string };
    expect(error.code).not.toBe(0);
    expect(error.stderr).toContain("required option '--split <split>' not specified");
  }, 60_000);
});
