/** The part of an MCP `tools/call` result Baton reads: `content` blocks, `structuredContent`, `isError`. */
export interface CallToolResultLike {
  content?: unknown;
  structuredContent?: unknown;
  isError?: unknown;
}

/**
 * The text of an MCP `tools/call` result for the model: `structuredContent` as JSON when the
 * server gave it, else the `content` blocks joined by newlines (text as is; an image or audio as
 * `[image image/png, 1234 bytes]`; an embedded resource's text, or `[resource <uri>]`; a resource
 * link as `[resource link <uri>]`).
 *
 * @param result what `client.callTool` returned
 * @example
 * ```ts
 * mcpResultText({ content: [{ type: 'text', text: 'Order A-1 shipped.' }] }); // 'Order A-1 shipped.'
 * ```
 */
export function mcpResultText(result: CallToolResultLike): string {
  if (result.structuredContent !== undefined && result.isError !== true)
    return JSON.stringify(result.structuredContent);
  const blocks = Array.isArray(result.content) ? (result.content as Array<Record<string, unknown>>) : [];
  return blocks.map(blockText).join('\n');
}

function blockText(block: Record<string, unknown>): string {
  switch (block.type) {
    case 'text':
      return String(block.text ?? '');
    case 'image':
    case 'audio': {
      const size = typeof block.data === 'string' ? Math.floor((block.data.length * 3) / 4) : 0;
      return `[${block.type} ${String(block.mimeType ?? '')}, ${size} bytes]`;
    }
    case 'resource': {
      const resource = (block.resource ?? {}) as Record<string, unknown>;
      return typeof resource.text === 'string' ? resource.text : `[resource ${String(resource.uri ?? '')}]`;
    }
    case 'resource_link':
      return `[resource link ${String(block.uri ?? '')}]`;
    default:
      return JSON.stringify(block);
  }
}
