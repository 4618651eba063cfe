/** `mcpServers` in lightsop.config.json: shapes, problems on the field, `${env:NAME}` expansion, CLI exit 3. */
import { describe, expect, it } from 'vitest';
import { parseConfigText, resolveMcpServer } from '@lightsop/core';
import { cli, tempTree } from '../helpers/cli';

const context = (env: Record<string, string | undefined>) => ({ env, folder: '/ws', resolvePath: (f: string, r: string) => `${f}/${r}` });

describe('mcpServers in the config', () => {
  it('reads stdio and Streamable HTTP servers, with type as .vscode/mcp.json writes it', () => {
    const text = JSON.stringify({
      mcpServers: {
        fs: { type: 'stdio', command: 'npx', args: ['-y', 'server', '${workspaceFolder}/data'], env: { ROOT: '${env:HOME_DIR}' }, cwd: 'tools' },
        web: { url: 'https://example.com/mcp', headers: { Authorization: 'Bearer ${env:TOKEN}' } },
        bare: { command: 'node', bareNames: true },
      },
    });
    const { config, problems } = parseConfigText(text);
    expect(problems).toEqual([]);
    expect(config!.mcpServers!.map((s) => [s.name, s.transport, s.bareNames])).toEqual([['fs', 'stdio', false], ['web', 'http', false], ['bare', 'stdio', true]]);
    const fs = resolveMcpServer(config!.mcpServers![0]!, context({ HOME_DIR: '/home/u' }));
    expect(fs.problems).toEqual([]);
    expect(fs.server).toMatchObject({ command: 'npx', args: ['-y', 'server', '/ws/data'], env: { ROOT: '/home/u' }, cwd: '/ws/tools' });
    const web = resolveMcpServer(config!.mcpServers![1]!, context({ TOKEN: 'sekret-123' }));
    expect(web.server).toMatchObject({ transport: 'http', url: 'https://example.com/mcp', headers: { Authorization: 'Bearer sekret-123' } });
  });

  it('puts each problem on its field and names it', () => {
    const text = '{\n  "mcpServers": {\n    "a.b": { "command": "x" },\n    "noCmd": { "args": [] },\n    "both": { "command": "x", "url": "http://h" },\n    "bad": { "command": "x", "args": "one", "envFile": ".env" },\n    "sse": { "type": "sse", "url": "http://h" },\n    "leak": { "url": "https://h", "headers": { "Authorization": "Bearer abcdef" } }\n  }\n}';
    const { config, problems } = parseConfigText(text);
    const messages = problems.map((p) => [p.message, text.slice(p.span.start, p.span.end)]);
    expect(messages).toEqual(expect.arrayContaining([
      [expect.stringContaining('server name "a.b"'), '"a.b"'],
      [expect.stringContaining('field "mcpServers.noCmd" needs "command"'), '{ "args": [] }'],
      [expect.stringContaining('field "mcpServers.both" has both "command" and "url"'), '{ "command": "x", "url": "http://h" }'],
      [expect.stringContaining('field "mcpServers.bad.args" must be an array of strings'), '"one"'],
      [expect.stringContaining('unknown field "mcpServers.bad.envFile"'), '"envFile"'],
      [expect.stringContaining('field "mcpServers.sse.type" must be "stdio" or "http"'), '"sse"'],
      [expect.stringContaining('field "mcpServers.leak.headers.Authorization" looks like a secret'), '"Bearer abcdef"'],
    ]));
    expect(config!.mcpServers).toEqual([]);
    expect(parseConfigText('{ "mcpServers": [] }').problems[0]!.message).toContain('field "mcpServers" must be an object');
  });

  it('expanding a variable that is not set, or ${input:...}, is a problem naming the field', () => {
    const { config } = parseConfigText(JSON.stringify({ mcpServers: { gh: { url: 'https://h/mcp', headers: { Authorization: 'Bearer ${env:GH_TOKEN}' } }, v: { command: '${input:cmd}' } } }));
    const gh = resolveMcpServer(config!.mcpServers![0]!, context({}));
    expect(gh.server).toBeNull();
    expect(gh.problems[0]!.message).toBe('field "mcpServers.gh.headers.Authorization": the environment variable GH_TOKEN is not set');
    const v = resolveMcpServer(config!.mcpServers![1]!, context({}));
    expect(v.problems[0]!.message).toContain('field "mcpServers.v.command": ${input:cmd} is not supported');
  });

  it('the CLI names the file and the field and exits 3', async () => {
    const dir = tempTree({
      'lightsop.config.json': JSON.stringify({ mcpServers: { gh: { url: 'https://h/mcp', headers: { Authorization: 'Bearer ${env:LIGHTSOP_TEST_UNSET_TOKEN}' } } } }),
      'p.sop': '@a gh.search x\n',
    });
    const res = await cli(['run', 'p.sop'], { cwd: dir });
    expect(res.code).toBe(3);
    expect(res.stderr).toMatch(/lightsop\.config\.json: field "mcpServers\.gh\.headers\.Authorization": the environment variable LIGHTSOP_TEST_UNSET_TOKEN is not set/);
    const bad = tempTree({ 'lightsop.config.json': '{ "mcpServers": { "x": { "url": "ftp://h" } } }', 'p.sop': '@a assign 1\n' });
    const lint = await cli(['lint', 'p.sop'], { cwd: bad });
    expect(lint.code).toBe(3);
    expect(lint.stderr).toContain('field "mcpServers.x.url" must be an http(s) URL');
  });
});
