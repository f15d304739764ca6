// A replay worker thread's bootstrap (started by replayInWorkers in replayWorkers.ts): registers tsx in
// this thread, so that the TypeScript entry and the workspace packages' sources load, then runs the entry.
// The worker is started with `--conditions=source`, so `@baton/*` resolve to their TypeScript sources.
import { register } from 'tsx/esm/api';

register();
await import('./replayWorkerMain.ts');
