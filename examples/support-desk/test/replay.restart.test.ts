import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AbcdConversation, DEFAULT_DATA_FILE, loadConversations } from '../src/abcdData.js';
import { chooseDeskStore } from '../src/deskStore.js';
import { loadOntology } from '../src/ontology.js';
import { deterministicPart, formatReplayReport, type ReplayReport } from '../src/replayReport.js';
import { runReplay } from '../src/runReplay.js';

let dir: string;
let plain: ReplayReport;
let restarted: ReplayReport;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'support-desk-restart-'));
  const all = await loadConversations(DEFAULT_DATA_FILE);
  // One conversation from each flow, so every specialist is exercised.
  const flows = [...new Set(all.map((c) => c.flow))];
  const conversations: AbcdConversation[] = flows.map((flow) => all.find((c) => c.flow === flow && c.turns.length > 12)!);
  const ontology = loadOntology();
  plain = await runReplay({ conversations, training: all, ontology, deskStore: chooseDeskStore({ directory: join(dir, 'plain') }) });
  restarted = await runReplay({ conversations, training: all, ontology, deskStore: chooseDeskStore({ directory: join(dir, 'restarted') }), restartEvery: 3 });
}, 120_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('--restart-every 3', () => {
  it('really rebuilds the workflow and reopens the store inside conversations', () => {
    expect(plain.measurements.restarts).toBe(0);
    expect(restarted.measurements.restarts).toBeGreaterThanOrEqual(20);
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
    const strip = (report: ReplayReport) => report.conversations.map(({ wallMs: _w, modelMs: _m, restarts: _r, ...rest }) => rest);
    expect(strip(restarted)).toEqual(strip(plain));
  });
});
