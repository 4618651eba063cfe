// fetch_url and redirects (issue 11, item 4): an approved public page that redirects to an internal
// one must not hand over the internal page without its own approval. Two real HTTP servers on
// 127.0.0.1 on different ports are two origins; the "internal" one counts the requests it gets.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  LoopSession, SopSession, approveAllSupervisor, createStandardSkills, describeCommands, toolsFromRegistry, type ToolChoice,
} from '@lightsop/runtime';
import { decision, recordingSupervisor, stubAgent, tempDir } from '../sessions/helpers';
import { call } from './helpers';

let servers: Server[] = [];
let publicBase = '';
let internalBase = '';
let internalHits = 0;
let hugeClosed: Promise<void> = Promise.resolve();

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeEach(async () => {
  internalHits = 0;
  internalBase = await listen(createServer((req, res) => {
    internalHits += 1;
    if (req.url === '/secret') res.writeHead(200).end('INTERNAL SECRET');
    else if (req.url === '/back') res.writeHead(302, { location: `${publicBase}/page` }).end();
    else res.writeHead(404).end();
  }));
  let markClosed!: () => void;
  hugeClosed = new Promise((r) => (markClosed = r));
  publicBase = await listen(createServer((req, res) => {
    if (req.url === '/page') res.writeHead(200).end('public page');
    else if (req.url === '/to-internal') res.writeHead(302, { location: `${internalBase}/secret` }).end();
    else if (req.url === '/moved') res.writeHead(301, { location: '/page' }).end();
    else if (req.url === '/loop') res.writeHead(307, { location: '/loop' }).end();
    else if (req.url === '/to-file') res.writeHead(302, { location: 'file:///etc/passwd' }).end();
    else if (req.url === '/round-trip') res.writeHead(302, { location: `${internalBase}/back` }).end();
    else if (req.url === '/huge') {
      // An endless body: the reader must stop at the cap and close the connection.
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const pump = () => {
        while (res.write(chunk));
      };
      res.on('drain', pump);
      res.on('close', () => markClosed());
      pump();
    } else res.writeHead(404).end();
  }));
});

afterEach(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  servers = [];
});

const urlOf = (choice: ToolChoice): string => {
  const p = choice.params as { args?: unknown[] } | string;
  return typeof p === 'string' ? p : String(p.args?.[0]);
};

describe('fetch_url redirects', () => {
  it('a redirect to another origin needs its own approval; denied, the internal page is never requested', async () => {
    const supervisor = recordingSupervisor((choice) => (urlOf(choice).startsWith(publicBase) ? 'approve' : { decision: 'deny', reason: 'internal host' }));
    const skills = createStandardSkills({ root: tempDir({}), supervisor });
    const r = await call(skills, 'fetch_url', [`${publicBase}/to-internal`]);
    expect(r.status).toBe('error');
    expect(String(r.data)).not.toContain('INTERNAL SECRET');
    expect(String(r.data)).toContain('Reason: internal host');
    expect(internalHits).toBe(0);
    expect(supervisor.choices.map(urlOf)).toEqual([`${publicBase}/to-internal`, `${internalBase}/secret`]);
    expect(supervisor.choices[1]).toMatchObject({ toolName: 'fetch_url', sideEffects: true });
    expect(supervisor.choices[1]!.reason).toContain(`redirected from ${publicBase}/to-internal`);
  });

  it('approved, the redirect is followed; same-origin redirects need no new approval', async () => {
    const supervisor = recordingSupervisor();
    const skills = createStandardSkills({ root: tempDir({}), supervisor });
    expect(await call(skills, 'fetch_url', [`${publicBase}/to-internal`])).toEqual({ status: 'success', data: 'INTERNAL SECRET' });
    expect(supervisor.choices).toHaveLength(2);
    expect(await call(skills, 'fetch_url', [`${publicBase}/moved`])).toEqual({ status: 'success', data: 'public page' });
    expect(supervisor.choices).toHaveLength(3);
    // Back to an origin this call already approved: no third question for the round trip.
    expect(await call(skills, 'fetch_url', [`${publicBase}/round-trip`])).toEqual({ status: 'success', data: 'public page' });
    expect(supervisor.choices.slice(3).map(urlOf)).toEqual([`${publicBase}/round-trip`, `${internalBase}/back`]);
  });

  it('redirect loops stop at the cap; a redirect to another scheme is refused', async () => {
    const skills = createStandardSkills({ root: tempDir({}), supervisor: approveAllSupervisor });
    expect(String((await call(skills, 'fetch_url', [`${publicBase}/loop`])).data)).toMatch(/too many redirects/);
    expect(String((await call(skills, 'fetch_url', [`${publicBase}/to-file`])).data)).toMatch(/only fetches http and https/);
  });

  it('an endless body is cut at the cap while streaming and the connection is closed', async () => {
    const skills = createStandardSkills({ root: tempDir({}), supervisor: approveAllSupervisor, fetch: { maxBytes: 100_000 } });
    const r = await call(skills, 'fetch_url', [`${publicBase}/huge`]);
    expect(r.status).toBe('success');
    expect(String(r.data)).toMatch(/^a{100000}\n… \(body cut at 100000 bytes\)$/);
    await hugeClosed;
  });

  it('inside sessions the redirect is asked through the session supervisor (SOP and loop)', async () => {
    const root = tempDir({});
    const skills = createStandardSkills({ root });
    const deny = (choice: ToolChoice) => (urlOf(choice).startsWith(internalBase) ? { decision: 'deny' as const, reason: 'not internal' } : 'approve' as const);
    const sopSupervisor = recordingSupervisor(deny);
    const sop = new SopSession({
      agent: stubAgent({ plans: [`@page fetch_url "${publicBase}/to-internal"\n@lastAnswer final_answer $page`, '@lastAnswer final_answer "refused"'] }),
      skillsDescription: describeCommands(skills), commandsRegistry: skills, options: { supervisor: sopSupervisor },
    });
    const events: string[] = [];
    sop.onEvent((e) => {
      if (e.type === 'approval_requested') events.push(urlOf(e.choice));
    });
    const answer = await sop.newPrompt('fetch the page');
    expect(JSON.stringify(answer)).not.toContain('INTERNAL SECRET');
    expect(sopSupervisor.choices.map(urlOf)).toEqual([`${publicBase}/to-internal`, `${internalBase}/secret`]);
    expect(sopSupervisor.choices[1]).toMatchObject({ origin: 'sop', toolName: 'fetch_url' });
    expect(events).toEqual([`${publicBase}/to-internal`, `${internalBase}/secret`]);
    expect(internalHits).toBe(0);

    const loopSupervisor = recordingSupervisor(deny);
    const loop = new LoopSession({
      agent: stubAgent({ decide: [decision('fetch_url', `${publicBase}/to-internal`), decision('final_answer', '$$fetch_url-res-1')] }),
      tools: toolsFromRegistry(skills), options: { supervisor: loopSupervisor, projectRoot: root, historyCompressionEnabled: false },
    });
    const result = await loop.newPrompt('fetch it');
    expect(String(result.answer)).not.toContain('INTERNAL SECRET');
    expect(loopSupervisor.choices.map(urlOf)).toEqual([`${publicBase}/to-internal`, `${internalBase}/secret`]);
    expect(loopSupervisor.choices[1]).toMatchObject({ origin: 'loop', toolName: 'fetch_url' });
    expect(internalHits).toBe(0);
  });
});
