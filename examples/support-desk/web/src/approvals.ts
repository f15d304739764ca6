import type { Request } from '@baton/core';

type Approval = Extract<Request, { type: 'tool_approval' }>;

/** What the supervisor decided about one approval. */
export type Decision = { approved: true } | { approved: false; reason: string };

/** The supervisor's view: one card per tool call waiting for approval, with approve and reject-with-reason. */
export class ApprovalInbox {
  readonly #list: HTMLUListElement;
  readonly #empty: HTMLElement;
  readonly #badge: HTMLElement;
  readonly #decide: (request: Approval, decision: Decision) => void;

  constructor(
    list: HTMLUListElement,
    empty: HTMLElement,
    badge: HTMLElement,
    decide: (request: Approval, decision: Decision) => void,
  ) {
    this.#list = list;
    this.#empty = empty;
    this.#badge = badge;
    this.#decide = decide;
  }

  /** Shows exactly the approvals among `requests`. */
  show(requests: readonly Request[]): void {
    const approvals = requests.filter((r): r is Approval => r.type === 'tool_approval');
    this.#list.replaceChildren(...approvals.map((r) => this.#card(r)));
    this.#empty.hidden = approvals.length > 0;
    this.#badge.hidden = approvals.length === 0;
    this.#badge.textContent = String(approvals.length);
  }

  #card(request: Approval): HTMLLIElement {
    const card = document.createElement('li');
    card.className = 'card';
    card.dataset.requestId = request.id;
    const title = document.createElement('strong');
    title.textContent = `${request.agent} wants to run ${request.toolName}`;
    const args = document.createElement('pre');
    args.textContent = JSON.stringify(JSON.parse(request.arguments), null, 2);
    const approve = button('Approve', 'approve', () => this.#decide(request, { approved: true }));
    const reason = document.createElement('input');
    reason.placeholder = 'Reason for rejecting';
    reason.setAttribute('aria-label', 'Reason for rejecting');
    const reject = button('Reject', 'reject', () =>
      this.#decide(request, { approved: false, reason: reason.value.trim() || 'Rejected by the supervisor.' }),
    );
    const row = document.createElement('div');
    row.className = 'row';
    row.append(reason, reject);
    card.append(title, args, approve, row);
    return card;
  }
}

function button(label: string, kind: string, onClick: () => void): HTMLButtonElement {
  const element = document.createElement('button');
  element.type = 'button';
  element.className = kind;
  element.textContent = label;
  element.addEventListener('click', () => {
    element.disabled = true;
    onClick();
  });
  return element;
}
