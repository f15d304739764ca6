/**
 * The customer of the `--replicas` campaign: drives the chaos conversation over HTTP through the
 * round-robin proxy, as a web client of a replicated server would. Before each step it follows
 * `GET /sessions/:id/events` with its `Last-Event-ID` (so a dropped stream is picked up again, most
 * often on the other replica), then reads `GET /sessions/:id` and answers the first pending request,
 * sends the next scripted message (by what the branch holds) or closes the session. It acts only
 * once it has caught up: a follow that was dropped (its replica down) is tried again before the
 * session is read, as a client must, or it would answer a request whose turn's events it never got
 * and, its `Last-Event-ID` moved past them by the next turn, never get them. A 409 (a turn runs on
 * the branch, maybe on the other replica) is retried after following the events; a dropped
 * connection or a 5xx (a replica killed under it) is retried too. Every event it receives is
 * recorded by id, for the stream oracle.
 */
import { type Message, type Request, requestKey } from '@baton/core';
import { type EventSourceMessage, EventSourceParserStream } from 'eventsource-parser/stream';
import { ANSWERS, scriptedMessagesSent, USER_MESSAGES } from './conversationScript.js';
import type { SideLog } from './sideLog.js';

/** What the customer saw of the streams, for {@link judgeStreams}. */
export interface StreamWitness {
  /** Each SSE id received, with the event (canonical JSON) it first carried. */
  events: Map<string, string>;
  /** An id received again with another event: the id, what it carried first, what it carried then. */
  conflicts: Array<{ id: string; first: string; later: string }>;
  /** Ids of the messages carried by `message` events. */
  messages: Set<string>;
}

/** Counts of what the customer went through. */
export interface CustomerCounts {
  /** 409s: a turn ran on the branch (often on the other replica). */
  refusals: number;
  /** Requests or streams cut by a killed replica (connection dropped, 5xx). */
  drops: number;
}

type View = { status: string; running: boolean; routingState: string; pendingRequests: Request[] };

/** Stops a call the customer makes when the server does not answer (a replica hung, not killed). */
const CALL_TIMEOUT_MS = 30_000;

/**
 * Drives one conversation to its end (the session closed).
 *
 * @example
 * ```ts
 * const customer = new ReplicaCustomer('chaos-chat', sideLog);
 * await customer.run(proxy.url, Date.now() + 120_000);
 * judgeStreams(customer.witness, await store.readMessages('chaos-chat', 'main'));
 * ```
 */
export class ReplicaCustomer {
  readonly witness: StreamWitness = { events: new Map(), conflicts: [], messages: new Set() };
  readonly counts: CustomerCounts = { refusals: 0, drops: 0 };
  /** Messages and requests seen per epoch, acknowledged at that epoch's `turn.completed`. */
  readonly #epochs = new Map<number, { messages: Array<{ id: string; seq: number }>; requests: Request[] }>();
  #lastEventId: string;
  #baseUrl = '';

  constructor(
    readonly sessionId: string,
    readonly log: SideLog,
  ) {
    // Nothing seen yet: a replay from before the first message.
    this.#lastEventId = `${sessionId}/main/0.0`;
  }

  /**
   * Runs the conversation until the session is closed.
   * @param baseUrl the proxy in front of the replicas
   * @throws {Error} when `deadline` (epoch ms) passes first, or on an answer no client should get (a 4xx other than 409/410)
   */
  async run(baseUrl: string, deadline: number): Promise<void> {
    this.#baseUrl = baseUrl;
    while ((await this.#call('POST', '/sessions', { id: this.sessionId }, [201, 409])) === undefined)
      await this.#pause(deadline);
    let waitingSince: number | undefined;
    for (;;) {
      if (!(await this.#follow())) {
        await this.#pause(deadline, 20);
        continue;
      }
      const view = (await this.#json('GET', `/sessions/${this.sessionId}`)) as View | undefined;
      if (view?.status === 'closed') return;
      // Dropped (its replica is down): at once, so the next requests reach the other replica (round robin).
      if (view === undefined) {
        await this.#pause(deadline, 20);
        continue;
      }
      if (view.running) {
        await this.#pause(deadline);
        continue;
      }
      // A cut turn nobody runs: a live replica's reconciler takes it over once its lease has expired.
      if (view.routingState === 'running') {
        waitingSince ??= Date.now();
        if (Date.now() - waitingSince < 10_000) {
          await this.#pause(deadline);
          continue;
        }
        this.log.append({ t: 'retry', code: 'CUT_TURN_NOT_RESUMED', message: 'not resumed in 10 s; sending' });
      }
      waitingSince = undefined;
      const [request] = view.pendingRequests;
      if (request !== undefined) {
        this.log.append({ t: 'answer', requestId: request.id, toolCallId: requestKey(request) });
        const answer =
          request.type === 'tool_approval'
            ? { approved: true }
            : { text: ANSWERS[(request as { prompt: string }).prompt] ?? 'no scripted answer' };
        await this.#turn(`/sessions/${this.sessionId}/requests/${encodeURIComponent(request.id)}`, answer);
        continue;
      }
      const stored = (await this.#json('GET', `/sessions/${this.sessionId}/messages`)) as
        | { messages: Message[] }
        | undefined;
      if (stored === undefined) continue;
      const next = USER_MESSAGES[scriptedMessagesSent(stored.messages)];
      if (next === undefined) await this.#call('POST', `/sessions/${this.sessionId}/close`, { reason: 'resolved' });
      else await this.#turn(`/sessions/${this.sessionId}/messages`, { text: next });
      if (Date.now() > deadline) throw new Error('the conversation did not end before the deadline');
    }
  }

  async #pause(deadline: number, ms = 100): Promise<void> {
    if (Date.now() > deadline) throw new Error('the conversation did not end before the deadline');
    await new Promise((resolve) => setTimeout(resolve, ms));
  }

  /**
   * What was missed since the last event seen, then the live rest of a turn running on any replica.
   * @returns false when the request or its stream was dropped or failed on the server (the client has not caught up)
   */
  async #follow(): Promise<boolean> {
    const drops = this.counts.drops;
    const response = await this.#fetch('GET', `/sessions/${this.sessionId}/events`, undefined, {
      accept: 'text/event-stream',
      'last-event-id': this.#lastEventId,
    });
    if (response !== undefined) await this.#read(response);
    return this.counts.drops === drops;
  }

  /** Starts a turn (a message or an answer) and reads its events; a 409 or a drop is left to the next round. */
  async #turn(path: string, body: unknown): Promise<void> {
    const response = await this.#fetch('POST', path, body, { accept: 'text/event-stream' });
    if (response !== undefined) await this.#read(response);
  }

  async #json(method: string, path: string): Promise<unknown> {
    return this.#call(method, path, undefined);
  }

  /** A JSON call; `undefined` when refused (409), dropped or failed on the server (5xx). */
  async #call(method: string, path: string, body: unknown, ok: number[] = [200]): Promise<unknown> {
    const response = await this.#fetch(method, path, body, { accept: 'application/json' }, ok);
    if (response === undefined) return undefined;
    try {
      return await response.json();
    } catch (error) {
      this.#dropped(`${method} ${path}: ${String(error)}`);
      return undefined;
    }
  }

  async #fetch(
    method: string,
    path: string,
    body: unknown,
    headers: Record<string, string>,
    ok: number[] = [200],
  ): Promise<Response | undefined> {
    let response: Response;
    try {
      response = await fetch(`${this.#baseUrl}${path}`, {
        method,
        headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      });
    } catch (error) {
      this.#dropped(`${method} ${path}: ${String(error)}`);
      return undefined;
    }
    if (ok.includes(response.status)) return response;
    const text = await response.text().catch(() => '');
    if (response.status === 409) {
      this.counts.refusals += 1;
      this.log.append({ t: 'retry', code: 'HTTP_409', message: `${method} ${path}: ${text.slice(0, 160)}` });
      return undefined;
    }
    if (response.status >= 500) this.#dropped(`${method} ${path} answered ${response.status}: ${text.slice(0, 160)}`);
    if (response.status === 410 || response.status >= 500) return undefined;
    throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 400)}`);
  }

  /** Reads an event stream to its end (or its drop), recording each event. */
  async #read(response: Response): Promise<void> {
    if (response.body === null) return;
    const stream = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
    try {
      for await (const message of stream as unknown as AsyncIterable<EventSourceMessage>) this.#receive(message);
    } catch (error) {
      this.#dropped(`a stream after ${this.#lastEventId}: ${String(error)}`);
    }
  }

  /** A request or stream cut (its replica died): counted, and logged as a retry. */
  #dropped(what: string): void {
    this.counts.drops += 1;
    this.log.append({ t: 'retry', code: 'DROPPED', message: what.slice(0, 200) });
  }

  #receive(message: EventSourceMessage): void {
    const id = message.id;
    if (id === undefined || id === '') return;
    // biome-ignore lint/suspicious/noExplicitAny: the events' JSON shapes are read by type
    const event = JSON.parse(message.data) as any;
    const canonical = canonicalJson({ event: message.event, data: event });
    const first = this.witness.events.get(id);
    if (first === undefined) this.witness.events.set(id, canonical);
    else if (first !== canonical) this.witness.conflicts.push({ id, first, later: canonical });
    this.#lastEventId = id;
    const epoch = Number(/\/(\d+):[^/]*$/.exec(id)?.[1] ?? 0);
    const seen = this.#epochs.get(epoch) ?? { messages: [], requests: [] };
    this.#epochs.set(epoch, seen);
    if (event.type === 'message') {
      this.witness.messages.add(event.message.id);
      seen.messages.push({ id: event.message.id, seq: event.message.seq });
    }
    if (event.type === 'request') seen.requests.push(event.request as Request);
    if (event.type === 'tool.result')
      this.log.append({ t: 'tool.result', toolCallId: event.toolCallId, agent: event.agent, tool: event.toolName });
    // Everything of the run is durable at its turn.completed: the messages of its epoch, and the requests it left.
    if (event.type === 'turn.completed')
      this.log.append({
        t: 'ack',
        messages: seen.messages,
        requests: seen.requests.map((r) => ({ id: r.id, toolCallId: requestKey(r) })),
      });
  }
}

/** JSON with object keys sorted, so the same event read from two sources compares equal. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}
