/** Server replicas as child processes on one store, and a round-robin proxy in front of them (node:http, 127.0.0.1). */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

/** The reply billing streams in the replicas' desk, in 4-character deltas. */
export const BILLING_REPLY =
  'Your refund of 40 EUR for order 1234 is on its way; expect it within five working days. Anything else?';

const CHILD = fileURLToPath(new URL('./replicaChild.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));

/** A running replica: its URL, its process, and how many model calls it made. */
export interface Replica {
  url: string;
  child: ChildProcess;
  modelCalls(): Promise<number>;
  kill(): Promise<void>;
}

/** Starts a replica (see `replicaChild.ts` for the env it reads) and waits for its `READY <url>`. */
export function startReplica(env: Record<string, string>): Promise<Replica> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=source', CHILD], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    child.once('exit', (code) => reject(new Error(`replica exited (${code}) before it was ready: ${stderr}`)));
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /READY (\S+)\n/.exec(out);
      if (match === null) return;
      const url = match[1]!;
      resolve({
        url,
        child,
        modelCalls: async () =>
          ((await (await fetch(`${url}/test/model-calls`)).json()) as { modelCalls: number }).modelCalls,
        kill: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGKILL');
          }),
      });
    });
  });
}

/** A round-robin reverse proxy: each request goes to the next replica (bodies and event streams piped through). */
export async function startProxy(targets: readonly string[]): Promise<{ url: string; close(): Promise<void> }> {
  let next = 0;
  const server = createServer((incoming, outgoing) => {
    const target = new URL(targets[next++ % targets.length]!);
    const forwarded = httpRequest(
      {
        hostname: target.hostname,
        port: target.port,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
        // A replica that dies mid-response cuts the client's connection too, as a load balancer does.
        answer.on('close', () => {
          if (!answer.complete) outgoing.destroy();
        });
      },
    );
    forwarded.on('error', () => outgoing.destroy());
    outgoing.on('close', () => forwarded.destroy());
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
