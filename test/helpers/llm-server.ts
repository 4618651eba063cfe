/**
 * A scripted OpenAI-compatible Chat Completions server on 127.0.0.1 for tests: real HTTP, so the
 * real client (retries, streaming, abort) is exercised. The script maps each request to a reply.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatRequest {
  model: string;
  messages: { role: string; content: string }[];
  stream?: boolean;
  tools?: unknown[];
  [key: string]: unknown;
}

export interface ScriptedReply {
  /** The assistant's text. */
  text?: string;
  /** An HTTP error status instead of a reply (e.g. 429, 500). */
  status?: number;
  /** Wait this long before answering (for client timeouts; to stop a request in flight use `hold`). */
  delayMs?: number;
  /**
   * Never answer: the response stays open until the client closes it (an abort) or the server
   * closes. For tests that stop a request in flight; they wait for `aborted` instead of a clock.
   */
  hold?: boolean;
  /** Tool calls for function-calling clients. */
  toolCalls?: { name: string; arguments: unknown }[];
  /** Extra response headers (e.g. `retry-after-ms` to make the client retry at once). */
  headers?: Record<string, string>;
  /** The usage the reply reports (default 1 prompt and 1 completion token). */
  usage?: { inputTokens: number; outputTokens: number };
}

export type Script = (request: ChatRequest, index: number) => ScriptedReply | string | Promise<ScriptedReply | string>;

export interface LlmServer {
  /** Base URL to give the client, ending in /v1. */
  readonly url: string;
  readonly requests: ChatRequest[];
  /** Indices of the requests whose client closed the connection before the reply was sent. */
  readonly aborted: number[];
  /** The last user message of each request. */
  prompts(): string[];
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

function completion(model: string, reply: ScriptedReply) {
  const toolCalls = reply.toolCalls?.map((t, i) => ({ id: `call_${i}`, type: 'function', function: { name: t.name, arguments: JSON.stringify(t.arguments) } }));
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, finish_reason: toolCalls ? 'tool_calls' : 'stop', message: { role: 'assistant', content: reply.text ?? null, ...(toolCalls ? { tool_calls: toolCalls } : {}) } }],
    usage: usageOf(reply),
  };
}

function usageOf(reply: ScriptedReply) {
  const input = reply.usage?.inputTokens ?? 1;
  const output = reply.usage?.outputTokens ?? 1;
  return { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };
}

export async function startLlmServer(script: Script): Promise<LlmServer> {
  const requests: ChatRequest[] = [];
  const aborted: number[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404).end();
      return;
    }
    const request = JSON.parse(await readBody(req)) as ChatRequest;
    const index = requests.length;
    requests.push(request);
    let reply: ScriptedReply;
    try {
      const r = await script(request, index);
      reply = typeof r === 'string' ? { text: r } : r;
    } catch (error) {
      reply = { status: 500, text: String(error) };
    }
    if (reply.hold || reply.delayMs) {
      const closed = await new Promise<boolean>((resolve) => {
        const timer = reply.hold ? null : setTimeout(() => resolve(false), reply.delayMs);
        res.on('close', () => {
          if (timer) clearTimeout(timer);
          resolve(true);
        });
      });
      if (closed) {
        aborted.push(index);
        return;
      }
    }
    if (reply.status && reply.status >= 400) {
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers }).end(JSON.stringify({ error: { message: reply.text ?? 'scripted error', type: 'server_error' } }));
      return;
    }
    if (request.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const text = reply.text ?? '';
      const pieces = text.match(/[\s\S]{1,7}/g) ?? [];
      for (const piece of pieces) {
        res.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: request.model, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] })}\n\n`);
      }
      res.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: request.model, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
      // The usage chunk comes last and only when asked for, as OpenAI sends it.
      if ((request.stream_options as { include_usage?: boolean } | undefined)?.include_usage) {
        res.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: request.model, choices: [], usage: usageOf(reply) })}\n\n`);
      }
      res.end('data: [DONE]\n\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion(request.model, reply)));
  };
  // A request the script cannot serve (a body that is not JSON) answers 500 with the reason
  // instead of an unhandled rejection and a client left waiting.
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `test LLM server: ${String(error)}`, type: 'server_error' } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    aborted,
    prompts: () => requests.map((r) => [...r.messages].reverse().find((m) => m.role === 'user')?.content ?? ''),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
