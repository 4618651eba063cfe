// Hostile workspace files for the language server (issue 11, item 14): a `lightsop.config.json`
// or a skills file that is a FIFO, a device such as /dev/zero, or a huge file. The server reads
// the config and a JSON skills description only when they are regular files, and at most 8 MiB of
// them: it reports the problem on the config and keeps answering, instead of hanging on the FIFO
// or reading hundreds of megabytes.
import { execFileSync } from 'node:child_process';
import { truncateSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { useTestWorkspace, type TestClient } from './helpers';

const { file, uriOf, write, start } = useTestWorkspace('lightsop-wsfiles-');
const fifo = (name: string) => execFileSync('mkfifo', [file(name)]);

/** The skills-not-loaded message on the config, after which a plan still gets its diagnostics. */
async function skillsProblem(c: TestClient): Promise<string> {
  const config = await c.diagnostics(uriOf('lightsop.config.json'), (p) => p.diagnostics.length > 0);
  const plan = uriOf('plan.sop');
  await c.open(plan, '@a emit $b\n');
  expect((await c.diagnosticsFor(plan, 1)).diagnostics.map((d) => d.code)).toContain('undefined-variable');
  expect(config.diagnostics.map((d) => d.code)).toEqual(['skills-not-loaded']);
  return config.diagnostics[0]!.message;
}

describe('workspace files that are not plain small files', () => {
  it('a skills file that is a FIFO is refused without blocking', async () => {
    write('lightsop.config.json', { skills: './skills.json' });
    fifo('skills.json');
    expect(await skillsProblem(await start())).toBe("Skills file './skills.json': cannot read (not a regular file)");
  });

  it('a skills file that is /dev/zero is refused before anything is read', async () => {
    write('lightsop.config.json', { skills: '/dev/zero' });
    expect(await skillsProblem(await start())).toBe("Skills file '/dev/zero': cannot read (not a regular file)");
  });

  it('a skills file above 8 MiB is refused', async () => {
    write('lightsop.config.json', { skills: './skills.json' });
    write('skills.json', '');
    truncateSync(file('skills.json'), 8 * 1024 * 1024 + 1);
    expect(await skillsProblem(await start())).toBe("Skills file './skills.json': cannot read (larger than 8 MiB)");
  });

  it('a lightsop.config.json that is a FIFO is reported, and plans are still checked', async () => {
    fifo('lightsop.config.json');
    const c = await start();
    const message = await c.waitUntil(() => c.messages.find((m) => m.message.includes('lightsop.config.json')), 'a message about the config');
    expect(message).toMatchObject({ type: 1, message: `${file('lightsop.config.json')}: cannot read (not a regular file)` });
    const plan = uriOf('plan.sop');
    await c.open(plan, '@a emit 1\n');
    expect((await c.diagnosticsFor(plan, 1)).diagnostics).toEqual([expect.objectContaining({ code: 'unused-variable' })]);
  });
});
