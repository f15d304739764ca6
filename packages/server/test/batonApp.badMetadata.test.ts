import { describe, expect, it } from 'vitest';
import { startDeskServer } from './support/fixture.js';
import { client } from './support/httpClient.js';

describe('probe', () => {
  it('probe', async () => {
    await using server = await startDeskServer();
    const ann = client(server.url);
    for (const body of [
      '{"id":"m1","metadata":{"$where":1}}',
      '{"id":"m2","metadata":{"a.b":1}}',
      '{"id":"m3","metadata":{"x":{"__proto__":{"p":1}}}}',
      '{"id":"m4","metadata":{"constructor":1}}',
      '{"id":"m5","metadata":{"__proto__":{"p":1}}}',
      `{"id":"m6","metadata":${'{"a":'.repeat(2000)}1${'}'.repeat(2000)}}`,
    ]) {
      const r = await ann.json('POST', '/sessions', body);
      console.log(r.status, JSON.stringify(r.body).slice(0, 300));
    }
    await ann.json('POST', '/sessions', { id: 'ap' });
    const a = await ann.json('POST', '/sessions/ap/messages', { text: 'I was charged twice' });
    console.log(JSON.stringify(a.body.pendingRequests));
    const b = await ann.json('POST', `/sessions/ap/requests/${a.body.pendingRequests[0].id}`, { text: 'A-1' });
    console.log(JSON.stringify(b.body.pendingRequests));
    const c = await ann.json('POST', '/sessions/ap/messages', { text: 'hello?' });
    console.log(c.status, JSON.stringify(c.body));
  });
});
