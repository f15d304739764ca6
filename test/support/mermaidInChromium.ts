import { createRequire } from 'node:module';
import { type Browser, chromium, type Page } from 'playwright-core';
import { ensureChromium } from './chromium.js';

/** What Mermaid made of a diagram: the diagram type its parser found and the rendered SVG, or the parser's error. */
export type MermaidVerdict = { ok: true; diagramType: string; svg: string } | { ok: false; error: string };

/**
 * Mermaid's own parser and renderer (the `mermaid` package's browser bundle) in headless Chromium,
 * for tests that must prove a diagram is one Mermaid accepts. Dispose with `await using`.
 */
export async function mermaidInChromium(): Promise<{
  check(text: string): Promise<MermaidVerdict>;
  [Symbol.asyncDispose](): Promise<void>;
}> {
  const bundle = createRequire(import.meta.url).resolve('mermaid/dist/mermaid.min.js');
  // Installed here when missing (as root), so the tests need not run after the one that used to install it.
  const found = process.env.BATON_CHROMIUM === undefined ? ensureChromium() : { path: process.env.BATON_CHROMIUM };
  if (found.path === undefined) throw new Error(`No Chromium for Mermaid: ${found.reason}`);
  const executablePath = found.path;
  const browser: Browser = await chromium.launch({ executablePath, headless: true });
  const page: Page = await browser.newPage();
  await page.setContent('<!doctype html><html><body><div id="scratch"></div></body></html>');
  await page.addScriptTag({ path: bundle });
  await page.evaluate(() =>
    (globalThis as unknown as { mermaid: { initialize(o: unknown): void } }).mermaid.initialize({ startOnLoad: false }),
  );
  let count = 0;
  return {
    async check(text: string): Promise<MermaidVerdict> {
      count += 1;
      return page.evaluate(
        async ({ text, id }) => {
          const mermaid = (
            globalThis as unknown as {
              mermaid: {
                parse(t: string): Promise<{ diagramType: string }>;
                render(id: string, t: string): Promise<{ svg: string }>;
              };
            }
          ).mermaid;
          try {
            const { diagramType } = await mermaid.parse(text);
            const { svg } = await mermaid.render(id, text);
            return { ok: true as const, diagramType, svg };
          } catch (error) {
            return { ok: false as const, error: String((error as Error)?.message ?? error) };
          }
        },
        { text, id: `diagram${count}` },
      );
    },
    async [Symbol.asyncDispose]() {
      await browser.close();
    },
  };
}
