import { ApiError, type DeskApi } from './api.js';

/**
 * The supervisor's timeline of the session: what `GET /sessions/:id/timeline` tells (turns, agents,
 * tool calls, handoffs, requests and their answers, checkpoints), as the same text `baton inspect` prints.
 */
export class TimelinePanel {
  readonly #pre: HTMLPreElement;
  readonly #api: DeskApi;
  /** Counts refreshes, so an older answer arriving late never overwrites a newer one. */
  #asked = 0;

  constructor(pre: HTMLPreElement, api: DeskApi) {
    this.#pre = pre;
    this.#api = api;
  }

  /** Fetches the session's timeline (branch `main`) and shows it; an error answer is shown in its place. */
  async refresh(sessionId: string): Promise<void> {
    const asked = ++this.#asked;
    this.#pre.setAttribute('aria-busy', 'true');
    let text: string;
    try {
      text = (await this.#api.json<{ text: string }>('GET', `/sessions/${encodeURIComponent(sessionId)}/timeline`))
        .text;
    } catch (error) {
      text = `The timeline could not be read: ${error instanceof ApiError ? error.message : String(error)}`;
    }
    if (asked !== this.#asked) return;
    this.#pre.textContent = text;
    this.#pre.setAttribute('aria-busy', 'false');
  }
}
