/**
 * `lightsop mcp --http PORT`: the server over Streamable HTTP at http://127.0.0.1:PORT/mcp. It
 * listens on the loopback address only and answers only requests whose Host is a loopback name and
 * whose Origin, when a browser sends one, is a loopback origin: a web page cannot reach it through
 * DNS rebinding. Each client gets a session (its own McpServer); at most MAX_SESSIONS live at once,
 * the least recently used one giving way to a new client.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

export const MCP_PATH = '/mcp';
export const MAX_SESSIONS = 64;
/** The largest request body (a plan of MAX_PLAN_CHARS fits with room; a larger one gets a tool error). */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

interface Session {
  readonly transport: StreamableHTTPServerTransport;
  readonly server: McpServer;
  lastSeen: number;
}

function reject(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/** Why a request may not come in (a foreign Host or Origin), or null. */
function foreign(req: IncomingMessage): string | null {
  const host = req.headers.host;
  let hostname: string;
  try {
    hostname = new URL(`http://${host ?? ''}`).hostname;
  } catch {
    return 'invalid Host header';
  }
  if (!host || !LOOPBACK.has(hostname)) return `Host ${hostname || '(none)'} is not allowed: the server answers on the loopback address only`;
  const origin = req.headers.origin;
  if (origin !== undefined) {
    let originHost: string | null;
    try {
      originHost = new URL(origin).hostname;
    } catch {
      originHost = null;
    }
    if (originHost === null || !LOOPBACK.has(originHost)) return `Origin ${origin} is not allowed`;
  }
  return null;
}

export interface HttpMcp {
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

/** Starts the HTTP server on 127.0.0.1:`port` (0 picks a free port); `create` makes each session's McpServer. */
export async function serveHttp(port: number, create: () => McpServer, log: (line: string) => void): Promise<HttpMcp> {
  const sessions = new Map<string, Session>();

  const closeSession = async (id: string) => {
    const session = sessions.get(id);
    if (!session) return;
    sessions.delete(id);
    await session.server.close().catch(() => undefined);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const refused = foreign(req);
    if (refused) return reject(res, 403, refused);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== MCP_PATH) return reject(res, 404, `not found: the MCP endpoint is ${MCP_PATH}`);
    const header = req.headers['mcp-session-id'];
    const id = Array.isArray(header) ? header[0] : header;
    if (id !== undefined) {
      const session = sessions.get(id);
      if (!session) return reject(res, 404, 'Session not found');
      session.lastSeen = Date.now();
      await session.transport.handleRequest(req, res);
      return;
    }
    if (req.method !== 'POST') return reject(res, 400, 'Bad Request: no session (initialize first)');
    // A new client: the least recently used session gives way when there are too many.
    if (sessions.size >= MAX_SESSIONS) {
      let oldest: [string, Session] | null = null;
      for (const entry of sessions) if (!oldest || entry[1].lastSeen < oldest[1].lastSeen) oldest = entry;
      if (oldest) await closeSession(oldest[0]);
    }
    const server = create();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      maxRequestBodySize: MAX_BODY_BYTES,
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, { transport, server, lastSeen: Date.now() });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    transport.onerror = (error) => log(`lightsop mcp: ${error.message}`);
    await server.connect(transport);
    await transport.handleRequest(req, res);
  };

  const http: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      log(`lightsop mcp: ${error instanceof Error ? error.message : String(error)}`);
      reject(res, 500, 'internal error');
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, '127.0.0.1', () => {
      http.off('error', reject);
      resolve();
    });
  });
  const actual = (http.address() as AddressInfo).port;
  return {
    port: actual,
    url: `http://127.0.0.1:${actual}${MCP_PATH}`,
    async close() {
      for (const id of [...sessions.keys()]) await closeSession(id);
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
