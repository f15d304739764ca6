import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { SessionRunner } from '@baton/handoff';
import { type Authenticate, createBatonApp } from '@baton/server';
import { type ServedBaton, serveBaton } from '@baton/server/node';
import type { HttpBindings } from '@hono/node-server';
import { serveStatic } from '@hono/node-server/serve-static';
import { Hono } from 'hono';
import { type OpenedDesk, openDesk } from '../desk/openDesk.js';
import { customerLines } from '../tools/world.js';
import { mountAgentProtocols } from './agentProtocols.js';
import type { WebTemporal, WebTemporalOptions } from './webTemporal.js';

/** The folder the web chat keeps its sessions in by default: `examples/support-desk/.data/web` (gitignored). */
export const DEFAULT_WEB_STORE_DIR = fileURLToPath(new URL('../../.data/web', import.meta.url));
/** The web chat's front end (Vite root: `index.html`, `src/*.ts`). */
export const WEB_ROOT = fileURLToPath(new URL('../../web', import.meta.url));
/** Where the front end is built to by default: `examples/support-desk/.data/web-dist` (gitignored). */
export const DEFAULT_WEB_DIST = fileURLToPath(new URL('../../.data/web-dist', import.meta.url));

/** Options of {@link startWebDesk}. */
export interface WebDeskOptions {
  /** Port (default 0: a free one) and host (default `127.0.0.1`). */
  port?: number;
  hostname?: string;
  /** The FileStore folder (default {@link DEFAULT_WEB_STORE_DIR}); `MONGODB_URL` in the environment picks MongoDB instead. */
  storeDir?: string;
  /** `'offline'` (default: the desk's offline models, no key needed) or `'openai'` (needs `OPENAI_API_KEY`). */
  models?: 'offline' | 'openai';
  /** The conversations file the offline models learn from (looked up as for `replay` when not given). */
  data?: string;
  /** Milliseconds between streamed words of the offline models, so replies visibly stream (default 20; 0 for none). */
  paceMs?: number;
  /** Build the front end with Vite before serving (default true); `false` serves an existing build. */
  build?: boolean;
  /** Where the front end is built to and served from (default {@link DEFAULT_WEB_DIST}). */
  distDir?: string;
  /**
   * Run the chat's turns on Temporal workers (`web --temporal`): the server sends each turn as an
   * Update of the session's workflow (see `connectWebTemporal`). Without it (the default) turns run
   * in this process and nothing connects anywhere.
   */
  temporal?: WebTemporalOptions;
}

/** A running web chat. */
export interface WebDesk {
  url: string;
  /** Where the sessions are kept (a folder, or a MongoDB database). */
  storeLocation: string;
  close(): Promise<void>;
}

/**
 * The demo's auth hook: the customer id the page sends as `Authorization: Bearer <id>` is the user,
 * in one tenant. It trusts the browser, which only a demo may do: put your sign-in here.
 */
export const demoAuthenticate: Authenticate = (request) => {
  const match = /^Bearer ([A-Za-z0-9_-]{1,64})$/.exec(request.headers.get('authorization') ?? '');
  return match === null ? undefined : { tenantId: 'acme-web', userId: match[1]! };
};

/**
 * Builds the web chat's front end with Vite (plain TypeScript modules, no framework).
 * @param distDir the output folder (emptied first)
 */
export async function buildWebChat(distDir: string = DEFAULT_WEB_DIST): Promise<void> {
  const { build } = await import('vite');
  await build({ root: WEB_ROOT, configFile: false, logLevel: 'warn', build: { outDir: distDir, emptyOutDir: true } });
}

/** Options of {@link createDeskApp}. */
export interface DeskAppOptions {
  /** The desk to serve, from `openDesk`. */
  desk: OpenedDesk;
  /** The auth hook of `/api`, `/ag-ui` and `/mcp` (default {@link demoAuthenticate}). */
  authenticate?: Authenticate;
  /** The server's base URL, read on the first A2A request (the agent card names it). */
  baseUrl: () => string;
  /** Runs `/api`'s turns elsewhere, e.g. on Temporal workers (default: in this process). */
  runner?: SessionRunner;
}

/**
 * The desk's HTTP app without its front end: the demo's customers at `/demo/customers`, the REST API
 * under `/api` (`createBatonApp`) and the agent protocols (AG-UI at `/ag-ui`, MCP at `/mcp`, A2A at
 * `/a2a/`, see {@link mountAgentProtocols}), all on the one workflow and store.
 *
 * @param options `{ desk, authenticate?, baseUrl }`
 * @returns a Hono app to serve with `serveBaton` (A2A needs `@hono/node-server`)
 * @example
 * ```ts
 * let url = '';
 * const app = createDeskApp({ desk: await openDesk({ storeDir: '.data/web' }), baseUrl: () => url });
 * url = (await serveBaton(app, { port: 8787 })).url;
 * ```
 */
export function createDeskApp(options: DeskAppOptions): Hono<{ Bindings: HttpBindings }> {
  const { workflow, worlds } = options.desk;
  const authenticate = options.authenticate ?? demoAuthenticate;
  const app = new Hono<{ Bindings: HttpBindings }>();
  // The demo's customers, listed on the page so that a newcomer knows whom to play (names, ids, usernames, emails).
  app.get('/demo/customers', (c) => c.json(customerLines(worlds.fallback)));
  const runner = options.runner;
  app.route('/api', createBatonApp({ workflow, authenticate, ...(runner === undefined ? {} : { runner }) }));
  mountAgentProtocols(app, { workflow, authenticate, baseUrl: options.baseUrl });
  return app;
}

/**
 * Starts the support desk as a web chat: the desk's workflow behind `@baton/server` under `/api`,
 * the agent protocols at `/ag-ui`, `/mcp` and `/a2a/` ({@link createDeskApp}), and the front end at
 * `/`. Sessions persist in a FileStore, so a reloaded page (or a restarted server) continues the
 * conversation.
 *
 * @throws {NotFoundError} when the offline models' data is missing; {@link ConfigurationError} for `openai` without a key
 * @example
 * ```ts
 * const desk = await startWebDesk({ port: 8787 });
 * console.log(`open ${desk.url}`);
 * ```
 */
export async function startWebDesk(options: WebDeskOptions = {}): Promise<WebDesk> {
  const distDir = options.distDir ?? DEFAULT_WEB_DIST;
  if (options.build !== false || !existsSync(`${distDir}/index.html`)) await buildWebChat(distDir);
  const desk = await openDesk({
    storeDir: options.storeDir ?? DEFAULT_WEB_STORE_DIR,
    paceMs: options.paceMs ?? 20,
    ...(options.models === undefined ? {} : { models: options.models }),
    ...(options.data === undefined ? {} : { data: options.data }),
  });
  // Imported only with the flag: the default chat loads nothing of Temporal.
  let temporal: WebTemporal | undefined;
  if (options.temporal !== undefined) {
    const { connectWebTemporal } = await import('./webTemporal.js');
    temporal = await connectWebTemporal(desk.workflow, desk.store, options.temporal);
  }
  let url = '';
  const app = createDeskApp({
    desk,
    baseUrl: () => url,
    ...(temporal === undefined ? {} : { runner: temporal.runner }),
  });
  app.use('/*', serveStatic({ root: distDir }));
  const server: ServedBaton = await serveBaton(app, {
    port: options.port ?? 0,
    hostname: options.hostname ?? '127.0.0.1',
  });
  url = server.url;
  return {
    url: server.url,
    storeLocation: desk.storeLocation,
    close: async () => {
      await server.close();
      await temporal?.close();
      await desk.close();
    },
  };
}
