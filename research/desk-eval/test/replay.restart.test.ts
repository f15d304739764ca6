import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEMO_DATA_FILE } from '@baton/example-support-desk/data/dataSource.js';
import { loadOntology } from '@baton/example-support-desk/data/ontology.js';
import { chooseDeskStore } from '@baton/example-support-desk/desk/deskStore.js';
import { type AbcdConversation, customerMessages, loadConversations } from '@baton/support-desk-models';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deterministicPart, formatReplayReport, type ReplayReport } from '../src/replayReport.js';
import { runReplay } from '../src/runReplay.js';

/** The conversation of each flow with the most customer messages (the first such in file order), so every specialist is exercised. */
const longestPerFlow = (all: AbcdConversation[]) =>
  [...new Set(all.map((c) => c.flow))].map((flow) =>
    all
      .filter((c) => c.flow === flow)
      .reduce((a, b) => (customerMessages(b).length > customerMessages(a).length ? b : a)),
  );

let dir: string;
let conversations: AbcdConversation[];
let plain: ReplayReport;
let restarted: ReplayReport;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'support-desk-restart-'));
  const all = await loadConversations(DEMO_DATA_FILE);
  conversations = longestPerFlow(all);
  const ontology = loadOntology();
  plain = await runReplay({
    conversations,
    training: all,
    ontology,
    deskStore: chooseDeskStore({ directory: join(dir, 'plain') }),
  });
  restarted = await runReplay({
    conversations,
    training: all,
    ontology,
    deskStore: chooseDeskStore({ directory: join(dir, 'restarted') }),
    restartEvery: 3,
  });
}, 120_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('--restart-every 3', () => {
  it('really rebuilds the workflow and reopens the store inside conversations', () => {
    expect(plain.measurements.restarts).toBe(0);
    // A restart comes before every 3rd customer message after the first (messages 4, 7, …).
    const expected = conversations.reduce((n, c) => n + Math.floor((customerMessages(c).length - 1) / 3), 0);
    expect(expected).toBeGreaterThanOrEqual(10);
    expect(restarted.measurements.restarts).toBe(expected);
  });

  it('gives the same routing figures and counts as a run without restarts', () => {
    expect(plain.counts.conversations).toBe(10);
    expect(plain.counts.failed).toBe(0);
    expect(plain.counts.handoffs).toBeGreaterThan(10);
    expect(plain.counts.userInputRequests).toBeGreaterThan(0);
    expect(deterministicPart(restarted)).toEqual(deterministicPart(plain));
    const routingText = (report: ReplayReport) => {
      const text = formatReplayReport(report);
      return text.slice(text.indexOf('Routing accuracy'), text.indexOf('Bytes stored'));
    };
    expect(routingText(restarted)).toBe(routingText(plain));
  });

  it('gives each conversation the same outcome', () => {
    const strip = (report: ReplayReport) =>
      report.conversations.map(({ wallMs: _w, modelMs: _m, restarts: _r, ...rest }) => rest);
    expect(strip(restarted)).toEqual(strip(plain));
  });
});
