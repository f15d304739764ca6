import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type A2AServeOptions, a2aApp } from '@baton/a2a';
import type { HandoffWorkflow } from '@baton/handoff';

/** A workflow served over A2A on 127.0.0.1 (a real HTTP server), and how to stop it. */
export interface ServedA2A {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Serves `workflow` with `a2aApp` (and `options`, e.g. `authenticate`) on 127.0.0.1, on `port` (0: any free port). */
export async function serveA2A(
  workflow: HandoffWorkflow,
  port = 0,
  options: Omit<A2AServeOptions, 'url'> = {},
): Promise<ServedA2A> {
  // The card's URL must name the port, so the port is taken first (0), then the app is attached.
  const { createServer } = await import('node:http');
  const server: Server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${actual}`;
  const app = a2aApp(workflow, { ...options, url: `${url}/` });
  // No keep-alive: a client's pooled socket would otherwise outlive a restart on the same port.
  server.on('request', (request, response) => {
    response.setHeader('connection', 'close');
    app(request, response);
  });
  return {
    url,
    port: actual,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error === undefined ? resolve() : reject(error)));
        server.closeAllConnections();
      }),
  };
}
