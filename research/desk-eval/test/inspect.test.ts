/**
 * `baton inspect` (issue 13) on sessions of the support desk: demo conversations (a refund with its
 * human approval, and a username recovery) are replayed into a FileStore and into a MongoStore
 * (the run's FerretDB, or MONGODB_URL); the command prints each session's timeline and writes a
 * Mermaid sequence diagram and topology graph, which Mermaid's own parser and renderer accept (the
 * `mermaid` package in headless Chromium).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runProgram } from '@baton/cli';
import { DEMO_DATA_FILE } from '@baton/example-support-desk/data/dataSource.js';
import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import { chooseDeskStore } from '@baton/example-support-desk/desk/deskStore.js';
import { MongoStore } from '@baton/store-mongo';
import { type AbcdConversation, loadConversations } from '@baton/support-desk-models';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mermaidInChromium } from '../../../test/support/mermaidInChromium.js';
import { testDatabaseName } from '../../../test/support/mongoServer.js';
import { mongoTestUrl } from '../../../test/support/mongoTestUrl.js';
import { sessionIdFor } from '../src/replayConversation.js';
import { runReplay } from '../src/runReplay.js';

const dbName = testDatabaseName('inspect');
let dir: string;
let conversations: AbcdConversation[];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'baton-inspect-'));
  const all = await loadConversations(DEMO_DATA_FILE);
  const ontology = loadOntology();
  // Conversations whose agent made a refund; the replayed desk asks a human to approve it in some of them.
  const refunds = all.filter((c) =>
    c.turns.some((t) => t.role === 'action' && t.text.startsWith('A refund has been made')),
  );
  const username = all.find((c) => c.subflow === 'recover_username')!;
  const approved = new Set<string>();
  await runReplay({
    conversations: [...refunds, username],
    training: all,
    ontology,
    deskStore: chooseDeskStore({ directory: join(dir, 'store') }),
    onEvent: (event) => {
      if (event.type === 'request' && event.request.type === 'tool_approval') approved.add(event.sessionId);
    },
  });
  const withApproval = refunds.find((c) => approved.has(sessionIdFor(c.id)));
  if (withApproval === undefined)
    throw new Error('No replayed refund conversation asked for an approval; the test needs one.');
  conversations = [withApproval, username];
  await runReplay({
    conversations,
    training: all,
    ontology,
    deskStore: chooseDeskStore({ mongoUrl: mongoTestUrl(), mongoDbName: dbName }),
  });
}, 180_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  const store = new MongoStore({ url: mongoTestUrl() }, { dbName });
  await store.db.dropDatabase();
  await store.close();
});

/** Runs `baton …` in this process, as `pnpm baton …` would, capturing what it prints. */
async function baton(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runProgram(['node', 'baton', ...args], { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const stores = () =>
  [
    ['FileStore', `file:${join(dir, 'store')}`, [] as string[]],
    ['MongoStore', mongoTestUrl(), ['--db', dbName]],
  ] as const;

describe('baton inspect', () => {
  it.each(['FileStore', 'MongoStore'])(
    'prints the timeline of a support-desk session on %s and writes Mermaid that Mermaid accepts',
    async (kind) => {
      const [, spec, extra] = stores().find(([name]) => name === kind)!;
      await using mermaid = await mermaidInChromium();
      const refundSession = sessionIdFor(conversations[0]!.id);
      const out = join(dir, `out-${kind}`);
      const {
        code,
        out: printed,
        err,
      } = await baton('inspect', '--store', spec, ...extra, '--session', refundSession, '--out', out);
      expect(err).toBe('');
      expect(code).toBe(0);

      const lines = printed.split('\n');
      expect(lines[0]).toMatch(new RegExp(`^session ${refundSession}  branch main  closed`));
      expect(lines).toContainEqual(expect.stringMatching(/^\S+\s+turn 1 {2}user: "/));
      // Triage routes the refund to a specialist, with the router's reason.
      expect(lines).toContainEqual(expect.stringMatching(/^\S+\s+ {2}handoff triage → \w+: "/));
      // Tool calls with their durations, and the refund's approval request with its answer.
      expect(lines).toContainEqual(expect.stringMatching(/^\S+\s+ {4}tool \S+ \{.*\} \(\d+ ms\) (→|FAILED:) ["{]/));
      expect(lines).toContainEqual(
        expect.stringMatching(/request tool_approval from \w+: approve offer-refund \{.*\} → "approved"/),
      );
      expect(lines).toContainEqual(expect.stringMatching(/checkpoint \S+ step \d+ through seq \d+ \(\d+ B\)/));
      expect(lines).toContainEqual(expect.stringMatching(/closed: "/));

      const sequence = await readFile(join(out, `${refundSession}.main.sequence.mmd`), 'utf8');
      const topology = await readFile(join(out, `${refundSession}.main.topology.mmd`), 'utf8');
      expect(printed).toContain(`wrote ${join(out, `${refundSession}.main.sequence.mmd`)}`);
      const drawnSequence = await mermaid.check(sequence);
      expect(drawnSequence).toMatchObject({ ok: true, diagramType: 'sequence' });
      expect(drawnSequence.ok && drawnSequence.svg).toContain('triage');
      const drawnTopology = await mermaid.check(topology);
      expect(drawnTopology).toMatchObject({ ok: true, diagramType: 'flowchart-v2' });
      // The checker does refuse what Mermaid refuses.
      expect(await mermaid.check(`${sequence}\n  user->>: ;;`)).toMatchObject({ ok: false });

      const other = await baton(
        'inspect',
        '--store',
        spec,
        ...extra,
        '--session',
        sessionIdFor(conversations[1]!.id),
        '--out',
        out,
      );
      expect(other.code).toBe(0);
      expect(
        await mermaid.check(
          await readFile(join(out, `${sessionIdFor(conversations[1]!.id)}.main.sequence.mmd`), 'utf8'),
        ),
      ).toMatchObject({ ok: true });
    },
    120_000,
  );

  it('names a bad --store value, an unknown session and an unknown branch', async () => {
    const bad = await baton('inspect', '--store', 'postgres://x', '--session', 's');
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('InvalidInputError: --store "postgres://x" is neither file:DIR nor a mongodb:// url');
    const missing = await baton(
      'inspect',
      '--store',
      `file:${join(dir, 'store')}`,
      '--session',
      'no-such-session',
      '--out',
      join(dir, 'none'),
    );
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(
      /^NotFoundError: Session "no-such-session" does not exist in this store without a tenant\. .* --tenant ID\.$/,
    );
    const branch = await baton(
      'inspect',
      '--store',
      `file:${join(dir, 'store')}`,
      '--session',
      sessionIdFor(conversations[0]!.id),
      '--branch',
      'nope',
      '--out',
      join(dir, 'none'),
    );
    expect(branch.code).toBe(1);
    expect(branch.err).toMatch(/NotFoundError: Branch "nope" .* does not exist \(branches: main\)/);
  });

  it('draws the topology of the workflow a --workflow module exports, and names a module that exports none', async () => {
    const module = join(dir, 'topology.mjs');
    await writeFile(
      module,
      'export const desk = { toMermaid: () => \'flowchart LR\\n  n0["triage"] --> n1["billing"]\' };\n',
    );
    const out = join(dir, 'out-workflow');
    const session = sessionIdFor(conversations[0]!.id);
    const drawn = await baton(
      'inspect',
      '--store',
      `file:${join(dir, 'store')}`,
      '--session',
      session,
      '--out',
      out,
      '--workflow',
      `${module}#desk`,
    );
    expect(drawn).toMatchObject({ code: 0, err: '' });
    expect(await readFile(join(out, `${session}.main.topology.mmd`), 'utf8')).toBe(
      'flowchart LR\n  n0["triage"] --> n1["billing"]\n',
    );
    const none = await baton(
      'inspect',
      '--store',
      `file:${join(dir, 'store')}`,
      '--session',
      session,
      '--out',
      out,
      '--workflow',
      module,
    );
    expect(none.code).toBe(1);
    expect(none.err).toContain(`--workflow ${JSON.stringify(module)} exports no HandoffWorkflow`);
  });
});
