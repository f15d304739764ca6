import { type ServedBaton, serveBaton } from '@baton/server/node';
import { createDeskApp } from '../../src/chat/webDesk.js';
import { DEMO_DATA_FILE } from '../../src/data/dataSource.js';
import { type OpenedDesk, openDesk } from '../../src/desk/openDesk.js';

/** The desk as `web` serves it (REST, AG-UI, MCP, A2A; no front end), offline models, a FileStore in `storeDir`. */
export interface ServedDesk {
  url: string;
  desk: OpenedDesk;
  /** Stops the server and closes the store, as a process exit would. */
  close(): Promise<void>;
}

/** Opens the desk on `storeDir` (a FileStore, whatever `MONGODB_URL` says) and serves it on 127.0.0.1. */
export async function serveDesk(storeDir: string): Promise<ServedDesk> {
  const desk = await openDesk({ storeDir, mongoUrl: '', data: DEMO_DATA_FILE });
  let url = '';
  const app = createDeskApp({ desk, baseUrl: () => url });
  const server: ServedBaton = await serveBaton(app);
  url = server.url;
  return {
    url,
    desk,
    close: async () => {
      await server.close();
      await desk.close();
    },
  };
}

/** What the customer says in the desk's refund conversation (as the web chat's browser test plays it). */
export const CRYSTAL = {
  complaint:
    'This is Crystal Minh. A premium service was added to my account without asking me, and now I am being charged for the service.',
  amount: 'I never signed up for it and I was charged $40.',
  goodbye: 'No, that is everything. Thank you!',
} as const;
