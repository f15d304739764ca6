import type { Message, Request } from '@baton/core';

const HANDOFF_PREFIX = 'handoff_to_';
const ASK = 'request_user_input';

/**
 * The chat transcript: renders committed messages (the same way live and after a reload), the text
 * an agent is streaming, and which tool calls wait for a supervisor's approval.
 */
export class Transcript {
  readonly #list: HTMLOListElement;
  #deltas = 0;

  constructor(list: HTMLOListElement) {
    this.#list = list;
  }

  clear(): void {
    this.#list.replaceChildren();
    this.#deltas = 0;
  }

  /** Adds a committed message: a customer's words, an agent's answer or question, a handoff, a console action and its result. */
  add(message: Message): void {
    if (message.role === 'user') this.#item('user', message.content);
    else if (message.role === 'assistant') {
      this.#list.querySelector(`li.streaming[data-agent="${message.agent}"]`)?.remove();
      if (message.content.trim() !== '') this.#item('assistant', message.content, message.agent);
      for (const call of message.toolCalls ?? []) {
        if (call.name.startsWith(HANDOFF_PREFIX)) continue;
        if (call.name === ASK) this.#item('question', String(parse(call.arguments).prompt ?? ''), message.agent);
        else this.#item('action', `${message.agent} runs ${call.name} ${call.arguments}`).dataset.callId = call.id;
      }
    } else if (message.role === 'tool') {
      if (message.toolName?.startsWith(HANDOFF_PREFIX) === true) {
        if (message.isError !== true)
          this.#item(
            'handoff',
            `↪ ${message.agent ?? '?'} handed you over to ${message.toolName.slice(HANDOFF_PREFIX.length)}`,
          );
      } else if (message.toolName === ASK) this.#item('user', message.content);
      else {
        this.#list.querySelector(`li.action[data-call-id="${message.toolCallId}"]`)?.classList.remove('awaiting');
        // The desk's console actions answer JSON with a `log` line (what ABCD's console printed); show that line.
        const log = parse(message.content).log;
        this.#item(
          'action',
          `${message.isError === true ? '✗' : '✓'} ${typeof log === 'string' ? log : message.content}`,
        );
      }
    }
    this.#scroll();
  }

  /** Adds a piece of the text `agent` is streaming (replaced by the message once it is committed). */
  delta(agent: string, text: string): void {
    let item = this.#list.querySelector<HTMLLIElement>(`li.streaming[data-agent="${agent}"]`);
    if (item === null) {
      item = this.#item('streaming', '', agent);
      item.dataset.agent = agent;
    }
    item.querySelector('.text')!.textContent += text;
    this.#deltas++;
    this.#list.dataset.deltas = String(this.#deltas);
    this.#scroll();
  }

  /** Marks the tool calls of pending approvals as waiting, and only those. */
  markAwaiting(requests: readonly Request[]): void {
    const waiting = new Set(requests.flatMap((r) => (r.type === 'tool_approval' ? [r.toolCallId] : [])));
    for (const item of this.#list.querySelectorAll<HTMLLIElement>('li.action[data-call-id]'))
      item.classList.toggle('awaiting', waiting.has(item.dataset.callId ?? ''));
  }

  #item(kind: string, text: string, agent?: string): HTMLLIElement {
    const item = document.createElement('li');
    item.className = kind;
    if (agent !== undefined) {
      const label = document.createElement('span');
      label.className = 'agent';
      label.textContent = agent;
      item.append(label);
    }
    const body = document.createElement('span');
    body.className = 'text';
    body.textContent = text;
    item.append(body);
    this.#list.append(item);
    return item;
  }

  #scroll(): void {
    this.#list.lastElementChild?.scrollIntoView({ block: 'end' });
  }
}

function parse(json: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
