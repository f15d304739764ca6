import { readFile } from 'node:fs/promises';

/**
 * The body of the first fenced code block of `language` after a heading of a Markdown file, so a
 * test can run what the README shows instead of a copy of it.
 *
 * @param file the Markdown file (a `file:` URL or a path)
 * @param heading the heading line as written, e.g. `'## A small example'`
 * @param language the fence's info string, e.g. `'ts'` or `'sh'`
 * @returns the code between the fences, ending with its last newline
 * @throws {Error} naming the file and the heading when the heading or a block after it is missing
 * @example
 * ```ts
 * const code = await codeBlockAfter(new URL('../README.md', import.meta.url), '## A small example', 'ts');
 * ```
 */
export async function codeBlockAfter(file: URL | string, heading: string, language: string): Promise<string> {
  const markdown = await readFile(file, 'utf8');
  const at = markdown.indexOf(`\n${heading}\n`);
  if (at === -1) throw new Error(`${String(file)} has no "${heading}" heading.`);
  const fence = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(markdown.slice(at));
  if (fence?.[1] === undefined) throw new Error(`${String(file)} has no \`\`\`${language} block after "${heading}".`);
  return fence[1];
}
