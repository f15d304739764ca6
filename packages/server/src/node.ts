import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';

/** A running Node HTTP server. */
export interface ServedBaton {
  /** The base URL, e.g. `http://127.0.0.1:8787`. */
  url: string;
  port: number;
  /** Stops accepting connections, ends open ones (event streams included) and resolves when closed. */
  close(): Promise<void>;
}

/**
 * Serves a Baton app (or any object with a Web-standard `fetch`) on Node's HTTP server through
 * Hono's Node adapter.
 *
 * @param app what answers requests, e.g. `createBatonApp({ workflow })`
 * @param options `{ port?, hostname? }`: port 0 (the default) picks a free one; hostname defaults to `127.0.0.1`
 * @returns the URL and a `close()`
 * @example
 * ```ts
 * const server = await serveBaton(createBatonApp({ workflow: desk }), { port: 8787 });
 * console.log(`listening on ${server.url}`);
 * ```
 */
export function serveBaton(
  app: { fetch: (request: Request) => Response | Promise<Response> },
  options: { port?: number; hostname?: string } = {},
): Promise<ServedBaton> {
  const hostname = options.hostname ?? '127.0.0.1';
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port: options.port ?? 0, hostname }, (info: AddressInfo) => {
      resolve({
        url: `http://${hostname.includes(':') ? `[${hostname}]` : hostname}:${info.port}`,
        port: info.port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            if ('closeAllConnections' in server) server.closeAllConnections();
          }),
      });
    });
    server.once('error', reject);
  });
}
