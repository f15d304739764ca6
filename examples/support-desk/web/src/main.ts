import type { Message, Request } from '@baton/core';
import { ApiError, DeskApi, type StreamedEvent } from './api.js';
import { ApprovalInbox, type Decision } from './approvals.js';
import { TimelinePanel } from './timeline.js';
import { Transcript } from './transcript.js';

/** What `GET /api/sessions/:id` answers (the fields the page reads). */
interface SessionInfo {
  id: string;
  status: 'active' | 'closed';
  running: boolean;
  pendingRequests: Request[];
}

const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const customerId = localStorage.getItem('desk.customer') ?? `customer-${crypto.randomUUID().slice(0, 8)}`;
localStorage.setItem('desk.customer', customerId);
const api = new DeskApi(customerId);
const transcript = new Transcript(byId<HTMLOListElement>('transcript'));
const status = byId<HTMLParagraphElement>('status');
const input = byId<HTMLInputElement>('message');
const sendButton = byId<HTMLButtonElement>('send');
const inbox = new ApprovalInbox(
  byId('approvals'),
  byId('no-approvals'),
  byId('approval-count'),
  (request, decision) => void decide(request.id, decision),
);
const timeline = new TimelinePanel(byId<HTMLPreElement>('timeline'), api);
let sessionId = '';
let pending: readonly Request[] = [];
let busy = false;
/** The session ended (an agent closed it with `end_conversation`): the next message starts a new one. */
let ended = false;

/** Lists the demo's customers (`GET /demo/customers`), whom the person at the keyboard plays. */
async function listCustomers(): Promise<void> {
  const lines = (await fetch('/demo/customers').then((r) => (r.ok ? r.json() : []))) as string[];
  byId('customer-list').replaceChildren(
    ...lines.map((line) => Object.assign(document.createElement('li'), { textContent: line })),
  );
}

/** Opens the conversation this browser had (or a new one) and shows it as it stands. */
async function open(): Promise<void> {
  let info: SessionInfo | undefined;
  const saved = localStorage.getItem('desk.session');
  if (saved !== null) info = await api.json<SessionInfo>('GET', `/sessions/${saved}`).catch(() => undefined);
  if (info === undefined || info.status === 'closed') info = await api.json<SessionInfo>('POST', '/sessions', {});
  sessionId = info.id;
  ended = false;
  localStorage.setItem('desk.session', sessionId);
  byId('session-id').textContent = sessionId;
  transcript.clear();
  const { messages } = await api.json<{ messages: Message[] }>('GET', `/sessions/${sessionId}/messages`);
  for (const message of messages) transcript.add(message);
  const shownSeq = messages.at(-1)?.seq ?? 0;
  if (messages.length === 0) status.textContent = 'Hello, thank you for contacting AcmeCorp! How can I help you today?';
  showPending(info.pendingRequests);
  // A turn still running (the page was reloaded mid-answer): follow its rest after the messages shown.
  if (info.running)
    await play(api.stream('GET', `/sessions/${sessionId}/events?lastEventId=${sessionId}/main/${shownSeq}.0`));
}

/** Shows a turn's events as they stream, then refreshes what the session waits on. */
async function play(events: AsyncIterable<StreamedEvent>): Promise<void> {
  busy = true;
  updateComposer();
  try {
    for await (const event of events) {
      if (event.type === 'message.delta') transcript.delta(event.agent, event.delta);
      else if (event.type === 'message') transcript.add(event.message);
      else if (event.type === 'request') showPending([...pending, event.request]);
      else if (event.type === 'error' && event.fatal) status.textContent = `Something went wrong: ${event.message}`;
      else if (event.type === 'session.closed') ended = true;
    }
    if (ended) {
      status.textContent = 'This conversation has ended. Type a message to start a new one.';
      return;
    }
    const info = await api.json<SessionInfo>('GET', `/sessions/${sessionId}`);
    showPending(info.pendingRequests);
  } catch (error) {
    status.textContent = error instanceof ApiError ? error.message : String(error);
  } finally {
    busy = false;
    updateComposer();
  }
}

function showPending(requests: readonly Request[]): void {
  pending = requests;
  inbox.show(requests);
  transcript.markAwaiting(requests);
  const approvals = requests.filter((r) => r.type === 'tool_approval');
  status.textContent =
    approvals.length > 0
      ? `A supervisor is reviewing ${approvals.map((r) => r.toolName).join(', ')}; please wait.`
      : '';
  updateComposer();
}

function updateComposer(): void {
  const waitingForSupervisor = pending.some((r) => r.type === 'tool_approval');
  input.disabled = busy || waitingForSupervisor;
  sendButton.disabled = busy || waitingForSupervisor;
  if (!input.disabled) input.focus();
}

async function decide(requestId: string, decision: Decision): Promise<void> {
  await play(api.stream('POST', `/sessions/${sessionId}/requests/${requestId}`, decision));
  await timeline.refresh(sessionId);
}

byId<HTMLFormElement>('composer').addEventListener('submit', (event) => {
  event.preventDefault();
  const text = input.value.trim();
  if (text === '' || busy) return;
  input.value = '';
  status.textContent = '';
  const send = () => play(api.stream('POST', `/sessions/${sessionId}/messages`, { text }));
  void (ended ? open().then(send) : send());
});

function switchView(supervisor: boolean): void {
  byId('customer-view').hidden = supervisor;
  byId('supervisor-view').hidden = !supervisor;
  byId('view-customer').setAttribute('aria-pressed', String(!supervisor));
  byId('view-supervisor').setAttribute('aria-pressed', String(supervisor));
  if (supervisor) void timeline.refresh(sessionId);
}
byId('view-customer').addEventListener('click', () => switchView(false));
byId('view-supervisor').addEventListener('click', () => switchView(true));
byId('new-chat').addEventListener('click', () => {
  void api
    .json('POST', `/sessions/${sessionId}/close`, { reason: 'customer started a new conversation' })
    .finally(() => {
      localStorage.removeItem('desk.session');
      void open();
    });
});

void open();
void listCustomers();
