import { InMemoryStore } from '@baton/core';
import { loadConversations } from '@baton/support-desk-models';
import { beforeAll, describe, expect, it } from 'vitest';
import { createChatRenderer } from '../src/chat/chatRenderer.js';
import { DEMO_DATA_FILE } from '../src/data/dataSource.js';
import { loadOntology } from '../src/data/ontology.js';
import { createDeskAgents } from '../src/desk/deskAgents.js';
import { createOfflineModels } from '../src/desk/deskModels.js';
import { buildDeskWorkflow } from '../src/desk/deskWorkflow.js';
import { WorldDirectory } from '../src/tools/world.js';

let output = '';
beforeAll(async () => {
  const ontology = loadOntology();
  const worlds = new WorldDirectory();
  const agents = createDeskAgents(
    ontology,
    createOfflineModels(await loadConversations(DEMO_DATA_FILE), ontology),
    worlds,
  );
  const desk = buildDeskWorkflow({ agents, store: new InMemoryStore() });
  const session = await desk.session({ id: 'chat-test', userId: 'u-1' });
  const render = createChatRenderer({ write: (text) => (output += text) });
  for await (const event of session.send('Hello')) render(event);
  for await (const event of session.send('I forgot my password and I cannot log in')) render(event);
  for await (const event of session.send(worlds.fallback.customers[1]!.name)) render(event);
});

describe('createChatRenderer', () => {
  it('shows which agent speaks, each handoff, each console action and each question', () => {
    expect(output).toContain('[triage] Hello, thank you for contacting AcmeCorp! How can I help you today?');
    expect(output).toMatch(/↪ handoff: triage → account \(flow account_access/);
    expect(output).toContain('[account] May I have your full name or account ID?');
    expect(output).toContain('· account runs pull-up-account {"customer_name":"Joyce Wu"}');
    expect(output).toContain('✓ Account has been pulled up for Joyce Wu.');
  });
});
