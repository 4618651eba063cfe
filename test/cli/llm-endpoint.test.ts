// The model endpoint as the CLI uses it (issue 10.11): a failing endpoint is named in the error
// (without credentials) and leaks no abort listeners; the request timeout and retries can be set
// with --llm-timeout / --llm-retries or "llm.timeout" / "llm.retries" in the config; a base URL
// that cannot be used is a usage error (exit 3) from the flag, the environment and the config.
import { createServer, type AddressInfo } from 'node:net';
import { getEventListeners } from 'node:events';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OpenAiCompatibleAgent } from '@lightsop/runtime';
import { ensureBuilt, lightsopAsync, tempTree } from '../helpers/cli';
import { startLlmServer, type LlmServer } from '../helpers/llm-server';

let server: LlmServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const ENGLISH = '#!english\nSay hello to Ada.\n';
const SECRET = 'sk-endpoint-secret-4242';

/** A port on 127.0.0.1 that nothing listens on (it was free a moment ago). */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe('the model endpoint of lightsop run and chat', () => {
  beforeAll(() => ensureBuilt());

  it('an unreachable endpoint is named in the error, with the reason', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/v1`;
    const dir = tempTree({ 'e.sop': ENGLISH });
    const res = await lightsopAsync(['run', 'e.sop', '--llm-base-url', url, '--llm-model', 'm', '--llm-retries', '0'], { cwd: dir });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`cannot reach the language model at ${url}: connection refused (ECONNREFUSED)`);
    expect(res.stderr).not.toMatch(/\n\s+at /);
  }, 60_000);

  it('retried failures leak no abort listeners: no MaxListenersExceededWarning, and the endpoint and status are named', async () => {
    // Every round of the english loop gets 4 attempts (3 retries); the server asks for an
    // immediate retry. Before, all 20 attempts left a listener on the run's one signal.
    server = await startLlmServer(() => ({ status: 503, text: 'overloaded', headers: { 'retry-after-ms': '1' } }));
    const dir = tempTree({ 'e.sop': ENGLISH });
    const res = await lightsopAsync(['run', 'e.sop', '--llm-base-url', server.url, '--llm-model', 'm'], { cwd: dir });
    expect(res.code).toBe(1);
    expect(server.requests.length).toBeGreaterThan(10);
    expect(res.stderr).not.toContain('MaxListenersExceededWarning');
    expect(res.stderr).toContain(`the language model at ${server.url} answered HTTP 503: overloaded`);
  }, 60_000);

  it('the caller\'s signal keeps no listener after a call, whether it succeeded or failed after retries', async () => {
    let calls = 0;
    server = await startLlmServer(() => (++calls % 2 === 0 ? '@lastAnswer final_answer "ok"' : { status: 500, text: 'flaky', headers: { 'retry-after-ms': '1' } }));
    const agent = new OpenAiCompatibleAgent({ baseUrl: server.url, model: 'm', maxRetries: 1 });
    const controller = new AbortController();
    for (let i = 0; i < 12; i++) expect(await agent.executePrompt(`call ${i}`, { signal: controller.signal })).toBe('@lastAnswer final_answer "ok"');
    const failing = new OpenAiCompatibleAgent({ baseUrl: server.url, model: 'm', maxRetries: 0 });
    calls = 2; // the next reply is an error
    await expect(failing.executePrompt('fail', { signal: controller.signal })).rejects.toThrow(/answered HTTP 500: flaky/);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  }, 30_000);

  it('--llm-timeout and --llm-retries bound a model that does not answer', async () => {
    server = await startLlmServer(() => ({ text: 'never', delayMs: 120_000 }));
    const dir = tempTree({ 'e.sop': ENGLISH });
    const res = await lightsopAsync(['run', 'e.sop', '--llm-base-url', server.url, '--llm-model', 'm', '--llm-timeout', '300ms', '--llm-retries', '0'], { cwd: dir });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`the language model at ${server.url} did not answer within 0.3 s (1 attempt)`);
  }, 60_000);

  it('"llm.timeout" and "llm.retries" in lightsop.config.json do the same; the flags override them', async () => {
    server = await startLlmServer(() => ({ text: 'never', delayMs: 120_000 }));
    const dir = tempTree({
      'e.sop': ENGLISH,
      'lightsop.config.json': JSON.stringify({ llm: { baseUrl: server.url, model: 'm', timeout: '250ms', retries: 0 } }),
    });
    const res = await lightsopAsync(['run', 'e.sop'], { cwd: dir });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('did not answer within 0.25 s (1 attempt)');
    const flags = await lightsopAsync(['run', 'e.sop', '--llm-timeout', '0.2s', '--llm-retries', '1'], { cwd: dir });
    expect(flags.stderr).toContain('did not answer within 0.2 s (2 attempts)');
  }, 60_000);

  it('invalid timeouts and retries are usage errors (exit 3) naming the flag or the config field', async () => {
    const dir = tempTree({ 'e.sop': ENGLISH });
    const flags = [['--llm-timeout', '0', 'expected a positive duration'], ['--llm-timeout', 'soon', 'expected a positive duration'], ['--llm-retries', '1.5', 'expected a non-negative integer']];
    for (const [flag, value, message] of flags) {
      const res = await lightsopAsync(['run', 'e.sop', '--llm-base-url', 'http://127.0.0.1:1/v1', '--llm-model', 'm', flag!, value!], { cwd: dir });
      expect(res.code).toBe(3);
      expect(res.stderr).toContain(`option '${flag}`);
      expect(res.stderr).toContain(message);
    }
    const fields = [['timeout', 0, 'must be a positive duration'], ['timeout', 'forever', 'must be a positive duration'], ['retries', 1.5, 'must be a non-negative integer']] as const;
    for (const [field, value, message] of fields) {
      const bad = tempTree({ 'e.sop': ENGLISH, 'lightsop.config.json': JSON.stringify({ llm: { baseUrl: 'http://127.0.0.1:1/v1', model: 'm', [field]: value } }) });
      const res = await lightsopAsync(['run', 'e.sop'], { cwd: bad });
      expect(res.code).toBe(3);
      expect(res.stderr).toContain(`field "llm.${field}" ${message}`);
    }
  }, 60_000);

  it('a base URL that is not http(s) exits 3 from the flag, as from the config, for run and chat', async () => {
    const dir = tempTree({ 'e.sop': ENGLISH });
    const run = await lightsopAsync(['run', 'e.sop', '--llm-base-url', 'notaurl', '--llm-model', 'm'], { cwd: dir });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("option '--llm-base-url <url>' argument 'notaurl' is invalid. expected an http(s) URL");
    const chat = await lightsopAsync(['chat', '--llm-base-url', 'ftp://host/v1', '--llm-model', 'm'], { cwd: dir });
    expect(chat.code).toBe(3);
    expect(chat.stderr).toContain('expected an http(s) URL');
    const env = await lightsopAsync(['run', 'e.sop', '--llm-model', 'm'], { cwd: dir, env: { LIGHTSOP_LLM_BASE_URL: 'notaurl' } });
    expect(env.code).toBe(3);
    expect(env.stderr).toContain('LIGHTSOP_LLM_BASE_URL: "notaurl": expected an http(s) URL');
    const config = tempTree({ 'e.sop': ENGLISH, 'lightsop.config.json': JSON.stringify({ llm: { baseUrl: 'notaurl', model: 'm' } }) });
    const fromConfig = await lightsopAsync(['run', 'e.sop'], { cwd: config });
    expect(fromConfig.code).toBe(3);
    expect(fromConfig.stderr).toContain('field "llm.baseUrl" must be an http(s) URL');
  }, 60_000);

  it('credentials in the base URL are refused (exit 3) and never printed, from the flag, the environment or the config', async () => {
    const dir = tempTree({ 'e.sop': ENGLISH });
    const url = `http://user:${SECRET}@127.0.0.1:1/v1`;
    const flag = await lightsopAsync(['chat', '--llm-base-url', url, '--llm-model', 'm'], { cwd: dir });
    const env = await lightsopAsync(['chat', '--llm-model', 'm'], { cwd: dir, env: { LIGHTSOP_LLM_BASE_URL: url } });
    const config = tempTree({ 'lightsop.config.json': JSON.stringify({ llm: { baseUrl: url, model: 'm' } }) });
    const fromConfig = await lightsopAsync(['chat'], { cwd: config });
    for (const res of [flag, env, fromConfig]) {
      expect(res.code).toBe(3);
      expect(res.stderr).toContain('must not contain a user name or password');
      expect(res.stdout + res.stderr).not.toContain(SECRET);
    }
    expect(env.stderr).toContain('LIGHTSOP_LLM_BASE_URL: "http://***@127.0.0.1:1/v1"');
  }, 60_000);
});
