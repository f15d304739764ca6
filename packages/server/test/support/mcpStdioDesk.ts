/**
 * The state desk as an MCP server on stdio, for the MCP stdio test (spawned by the SDK's client):
 *
 *   node --conditions=source --import tsx mcpStdioDesk.ts <store directory> <session id>
 */
import { FileStore } from '@baton/core';
import { serveMcpStdio } from '../../src/mcp/index.js';
import { stateDesk } from './stateDesk.js';

const [directory, sessionId] = process.argv.slice(2);
if (directory === undefined || sessionId === undefined)
  throw new Error('usage: mcpStdioDesk.ts <store directory> <session id>');
const { workflow } = stateDesk(new FileStore({ directory }));
await serveMcpStdio({ workflow, sessionId });
