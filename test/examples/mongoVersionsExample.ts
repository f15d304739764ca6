import { MongoStore } from '@baton/store-mongo';

const store = new MongoStore({ url: process.env.MONGODB_URL ?? 'mongodb://127.0.0.1:27017/' }, { dbName: 'readme_versions' });
// The first use (or init()) of a version-1 database gives the messages, branches, checkpoints and
// pending writes of tenants' sessions their tenantId, once; documents are migrated on read.
const messages = await store.readMessages('chat-81', 'main', { tenantId: 'acme' });
console.log(messages.map(({ seq, content }) => ({ seq, content })));
// After a rolling upgrade during which older processes kept writing, run it again:
console.log(await store.migrate()); // { messages: 0, branches: 0, checkpoints: 0, pendingWrites: 0 }
await store.close();
