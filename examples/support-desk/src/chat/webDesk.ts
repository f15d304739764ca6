import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ModelClient, ModelRequest, ModelStreamEvent, Store } from '@baton/core';
import type { HandoffWorkflow } from '@baton/handoff';
import { EpisodicMemory } from '@baton/memory';
import { type Authenticate, createBatonApp } from '@baton/server';
import { type ServedBaton, serveBaton } from '@baton/server/node';
import { loadConversations } from '@baton/support-desk-models';
import { serveStatic } from '@hono/node-server/serve-static';
import { Hono } from 'hono';
import { resolveDataSource } from '../data/dataSource.js';
import { loadOntology } from '../data/ontology.js';
import { createDeskAgents, type DeskModels } from '../desk/deskAgents.js';
import { createOfflineModels, createOpenAIModels } from '../desk/deskModels.js';
import { chooseDeskStore, type DeskStore } from '../desk/deskStore.js';
import { buildDeskWorkflow } from '../desk/deskWorkflow.js';
import { customerLines, WorldDirectory } from '../tools/world.js';
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

/**
 * Starts the support desk as a web chat: the desk's workflow behind `@baton/server` under `/api`,
 * and the front end at `/`. Sessions persist in a FileStore, so a reloaded page (or a restarted
 * server) continues the conversation.
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
  const { workflow, store, deskStore, worlds } = await openWebWorkflow(options);
  // Imported only with the flag: the default chat loads nothing of Temporal.
  let temporal: WebTemporal | undefined;
  if (options.temporal !== undefined) {
    const { connectWebTemporal } = await import('./webTemporal.js');
    temporal = await connectWebTemporal(workflow, store, options.temporal);
  }
  const app = new Hono();
  // The demo's customers, listed on the page so that a newcomer knows whom to play (names, ids, usernames, emails).
  app.get('/demo/customers', (c) => c.json(customerLines(worlds.fallback)));
  app.route(
    '/api',
    createBatonApp({
      workflow,
      authenticate: demoAuthenticate,
      ...(temporal === undefined ? {} : { runner: temporal.runner }),
    }),
  );
  app.use('/*', serveStatic({ root: distDir }));
  const server: ServedBaton = await serveBaton(app, {
    port: options.port ?? 0,
    hostname: options.hostname ?? '127.0.0.1',
  });
  return {
    url: server.url,
    storeLocation: deskStore.location,
    close: async () => {
      await server.close();
      await temporal?.close();
      await store.close();
    },
  };
}

/**
 * The web chat's workflow: the desk's agents on the chosen models, its store (a FileStore in
 * `storeDir`, or MongoDB when `MONGODB_URL` is set) and episodic memory. A Temporal worker started
 * apart (`web:worker`) builds the same one.
 * @throws {NotFoundError} when the offline models' data is missing; {@link ConfigurationError} for `openai` without a key
 * @example
 * ```ts
 * const { workflow, store } = await openWebWorkflow({ storeDir: '.data/web' });
 * ```
 */
export async function openWebWorkflow(
  options: Pick<WebDeskOptions, 'models' | 'data' | 'paceMs' | 'storeDir'> = {},
): Promise<{ workflow: HandoffWorkflow; store: Store; deskStore: DeskStore; worlds: WorldDirectory }> {
  const ontology = loadOntology();
  let models: DeskModels;
  if (options.models === 'openai') models = await createOpenAIModels();
  else {
    const source = await resolveDataSource({ data: options.data });
    models = pacedModels(createOfflineModels(await loadConversations(source.file), ontology), options.paceMs ?? 20);
  }
  const deskStore = chooseDeskStore({
    directory: options.storeDir ?? DEFAULT_WEB_STORE_DIR,
    mongoUrl: process.env.MONGODB_URL,
  });
  const store = await deskStore.open();
  const worlds = new WorldDirectory();
  const workflow = buildDeskWorkflow({
    agents: createDeskAgents(ontology, models, worlds),
    store,
    memory: new EpisodicMemory(),
  });
  return { workflow, store, deskStore, worlds };
}

/** The models with a pause of `ms` before each streamed piece of text (the offline models answer at once). */
function pacedModels(models: DeskModels, ms: number): DeskModels {
  if (ms <= 0) return models;
  return { triage: paced(models.triage, ms), specialist: (name) => paced(models.specialist(name), ms) };
}

function paced(model: ModelClient, ms: number): ModelClient {
  return {
    model: model.model,
    async *stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
      for await (const event of model.stream(request)) {
        if (event.type === 'text.delta') await new Promise((resolve) => setTimeout(resolve, ms));
        yield event;
      }
    },
  };
}
