// The baseline of bench/mcp.mjs, in a process of its own like `lightsop run`: the SDK's Client
// starts server-everything over stdio, lists its tools, then makes N echo calls of one message,
// one after the other, on one connection. Prints the time per call, from the first call's
// start to the last one's end, in ms.
// Usage: node bench/_mcp-direct.mjs SERVER_SCRIPT N
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [server, count] = process.argv.slice(2);
const n = Number(count);
const client = new Client({ name: 'bench', version: '1.0.0' });
await client.connect(new StdioClientTransport({ command: process.execPath, args: [server, 'stdio'], stderr: 'ignore' }));
await client.listTools();
const t0 = performance.now();
for (let i = 0; i < n; i++) await client.callTool({ name: 'echo', arguments: { message: 'hello' } });
const perCall = (performance.now() - t0) / n;
await client.close();
console.log(perCall.toFixed(4));
