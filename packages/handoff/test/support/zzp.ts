import { InMemoryStore } from '@baton/core';
import { HandoffBuilder } from '../../src/index.js';
import { deskAgents } from './helpers.js';
const { triage, billing } = deskAgents('billing', false);
const session = await new HandoffBuilder().participants(triage, billing).store(new InMemoryStore()).build().session({ id: 'p' });
for (let i = 0; i < 4000; i++) { for await (const _ of session.send(`Question ${i}: I was charged twice.`)) {} }
