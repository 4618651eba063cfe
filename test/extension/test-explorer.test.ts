/**
 * Plan tests in the Test Explorer (extension/src/testing): the controller finds the workspace's
 * `*.sop.test.json` files (and follows the watcher), lists their tests at their lines, runs them
 * with the CLI's runner and reports a failing expectation at its line with expected and actual;
 * the Debug profile runs the plan under the real plan debugger (PlanDebugSession driven over DAP)
 * with the test's mocks and judges it alike. In an untrusted workspace a test with "skills": true
 * is refused and the skills module is never imported; mock-only tests run.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { globSync } from 'tinyglobby';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

const fake = vi.hoisted(() => {
  const state = {
    trusted: true,
    root: '',
    controllers: [] as FakeController[],
    watchers: [] as { create: ((u: unknown) => void)[]; change: ((u: unknown) => void)[]; del: ((u: unknown) => void)[] }[],
    terminated: [] as ((s: { configuration: Record<string, unknown> }) => void)[],
    launch: null as null | ((config: Record<string, unknown>) => Promise<void>),
    launches: [] as Record<string, unknown>[],
  };
  class Uri {
    readonly scheme = 'file';
    constructor(readonly fsPath: string) {}
    get path() {
      return this.fsPath;
    }
    toString() {
      return `file://${this.fsPath}`;
    }
    static file(p: string) {
      return new Uri(p);
    }
    static parse(s: string) {
      return new Uri(decodeURIComponent(s.replace(/^file:\/\//, '')));
    }
  }
  class Position {
    constructor(readonly line: number, readonly character: number) {}
  }
  class Range {
    constructor(readonly start: Position, readonly end: Position) {}
  }
  class Location {
    constructor(readonly uri: Uri, readonly range: Position) {}
  }
  class TestMessage {
    expectedOutput?: string;
    actualOutput?: string;
    location?: Location;
    constructor(readonly message: string) {}
    static diff(message: string, expected: string, actual: string) {
      const m = new TestMessage(message);
      m.expectedOutput = expected;
      m.actualOutput = actual;
      return m;
    }
  }
  class Collection {
    readonly map = new Map<string, FakeItem>();
    add(i: FakeItem) {
      this.map.set(i.id, i);
    }
    get(id: string) {
      return this.map.get(id);
    }
    delete(id: string) {
      this.map.delete(id);
    }
    replace(items: FakeItem[]) {
      this.map.clear();
      for (const i of items) this.add(i);
    }
    forEach(f: (i: FakeItem) => void) {
      for (const i of [...this.map.values()]) f(i);
    }
    get size() {
      return this.map.size;
    }
  }
  class FakeItem {
    range?: Range;
    error?: string;
    readonly children = new Collection();
    constructor(readonly id: string, readonly label: string, readonly uri: Uri) {}
  }
  type Event = { kind: string; item: FakeItem; messages?: TestMessage[] };
  class FakeRun {
    readonly events: Event[] = [];
    ended = false;
    enqueued(item: FakeItem) {
      this.events.push({ kind: 'enqueued', item });
    }
    started(item: FakeItem) {
      this.events.push({ kind: 'started', item });
    }
    passed(item: FakeItem) {
      this.events.push({ kind: 'passed', item });
    }
    skipped(item: FakeItem) {
      this.events.push({ kind: 'skipped', item });
    }
    failed(item: FakeItem, messages: TestMessage | TestMessage[]) {
      this.events.push({ kind: 'failed', item, messages: ([] as TestMessage[]).concat(messages) });
    }
    errored(item: FakeItem, messages: TestMessage | TestMessage[]) {
      this.events.push({ kind: 'errored', item, messages: ([] as TestMessage[]).concat(messages) });
    }
    appendOutput() {}
    end() {
      this.ended = true;
    }
    /** The final state of each test by label. */
    outcome(): Record<string, { kind: string; messages?: TestMessage[] }> {
      const out: Record<string, { kind: string; messages?: TestMessage[] }> = {};
      for (const e of this.events) if (!['enqueued', 'started'].includes(e.kind)) out[e.item.label] = { kind: e.kind, messages: e.messages };
      return out;
    }
  }
  class FakeController {
    readonly items = new Collection();
    readonly profiles: { label: string; kind: number; handler: (req: unknown, token: unknown) => Promise<void> }[] = [];
    readonly runs: FakeRun[] = [];
    resolveHandler?: (item?: FakeItem) => Promise<void>;
    refreshHandler?: () => Promise<void>;
    constructor(readonly id: string, readonly label: string) {}
    createTestItem(id: string, label: string, uri: Uri) {
      return new FakeItem(id, label, uri);
    }
    createRunProfile(label: string, kind: number, handler: (req: unknown, token: unknown) => Promise<void>) {
      this.profiles.push({ label, kind, handler });
      return { dispose() {} };
    }
    createTestRun() {
      const run = new FakeRun();
      this.runs.push(run);
      return run;
    }
    dispose() {}
  }
  const event = <T,>(list: T[]) => (handler: T) => {
    list.push(handler);
    return { dispose() {} };
  };
  class EventEmitter {
    readonly listeners: ((e: unknown) => void)[] = [];
    event = (l: (e: unknown) => void) => {
      this.listeners.push(l);
      return { dispose() {} };
    };
    fire(e: unknown) {
      for (const l of this.listeners) l(e);
    }
    dispose() {}
  }
  const vscode = {
    Uri, Position, Range, Location, TestMessage, EventEmitter,
    TestRunProfileKind: { Run: 1, Debug: 2, Coverage: 3 },
    tests: {
      createTestController(id: string, label: string) {
        const c = new FakeController(id, label);
        state.controllers.push(c);
        return c;
      },
    },
    workspace: {
      get isTrusted() {
        return state.trusted;
      },
      get workspaceFolders() {
        return [{ uri: Uri.file(state.root), name: 'ws', index: 0 }];
      },
      textDocuments: [] as unknown[],
      getWorkspaceFolder: () => ({ uri: Uri.file(state.root), name: 'ws', index: 0 }),
      getConfiguration: () => ({ get: () => undefined, inspect: () => undefined }),
      findFiles: async (glob: string) => globSync([glob], { cwd: state.root, absolute: true, ignore: ['**/node_modules/**'] }).sort().map((f) => Uri.file(f)),
      createFileSystemWatcher() {
        const w = { create: [] as ((u: unknown) => void)[], change: [] as ((u: unknown) => void)[], del: [] as ((u: unknown) => void)[] };
        state.watchers.push(w);
        return { onDidCreate: event(w.create), onDidChange: event(w.change), onDidDelete: event(w.del), dispose() {} };
      },
      onDidSaveTextDocument: () => ({ dispose() {} }),
    },
    window: {
      showWarningMessage: async () => undefined,
      showInformationMessage: async () => undefined,
    },
    debug: {
      onDidTerminateDebugSession: event(state.terminated),
      async startDebugging(_folder: unknown, config: Record<string, unknown>) {
        state.launches.push(config);
        void state.launch!(config);
        return true;
      },
    },
  };
  return { state, vscode, FakeController, FakeRun };
});
vi.mock('vscode', () => fake.vscode);

// After the mock: these modules import `vscode`.
const { PlanTestExplorer } = await import('../../extension/src/testing/test-explorer');
const { DebuggedTests } = await import('../../extension/src/testing/debugged-tests');
const { VsCodeDebugHost } = await import('../../extension/src/debug/vscode-debugger');
const { PlanDebugSession } = await import('../../extension/src/debug/adapter');
const { ResultsStore } = await import('../../extension/src/run/results');
const { RunHistory } = await import('../../extension/src/run/run-records');

type Controller = InstanceType<typeof fake.FakeController>;
type Run = InstanceType<typeof fake.FakeRun>;

const PLAN = '# Greet someone\n@name     assign "Ada"\n@greeting greet $name\n@shout    upper $greeting\n';
const TESTS = `{
  "tests": [
    {
      "name": "greets",
      "mocks": [
        { "command": "greet", "args": ["Ada"], "value": "Hello, Ada" },
        { "command": "upper", "value": "HELLO, ADA" }
      ],
      "expect": { "greeting": "Hello, Ada", "shout": "HELLO, ADA" },
      "failures": []
    },
    {
      "name": "expects the wrong greeting",
      "mocks": [
        { "command": "greet", "value": "Hello, Ada" },
        { "command": "upper", "value": "HELLO, ADA" }
      ],
      "expect": {
        "greeting": "Hello, Bob"
      }
    },
    {
      "name": "with the real skills",
      "skills": true,
      "expect": { "shout": "HELLO, ADA!" }
    }
  ]
}
`;
const SKILLS = `import { writeFileSync } from 'node:fs';
writeFileSync(new URL('./imported.marker', import.meta.url), 'imported');
export default {
  greet: { description: 'greets', run: ([n]) => 'Hello, ' + n + '!' },
  upper: { description: 'upper', run: ([t]) => String(t).toUpperCase() },
};
`;

/** The 0-based line of the first occurrence of `needle` in `text`. */
const lineOf = (text: string, needle: string) => text.slice(0, text.indexOf(needle)).split('\n').length - 1;

let root: string;
let explorer: InstanceType<typeof PlanTestExplorer>;
let controller: Controller;
let debugged: InstanceType<typeof DebuggedTests>;
/** Traces asked for by debug launches: a plan test's debug run is never traced. */
let traceStarts = 0;

/** Drives a real PlanDebugSession over DAP for a launch, as VS Code's inline adapter would. */
function debugLauncher(host: InstanceType<typeof VsCodeDebugHost>) {
  return (config: Record<string, unknown>) => new Promise<void>((resolve) => {
    const session = new PlanDebugSession(host);
    let seq = 1;
    const send = (command: string, args: unknown) => session.handleMessage({ seq: seq++, type: 'request', command, arguments: args } as never);
    session.onDidSendMessage((m) => {
      const message = m as { type: string; event?: string };
      if (message.type === 'event' && message.event === 'initialized') send('configurationDone', {});
      if (message.type === 'event' && message.event === 'terminated') {
        for (const h of fake.state.terminated) h({ configuration: config });
        resolve();
      }
    });
    send('initialize', { adapterID: 'lightsoplang', linesStartAt1: true, columnsStartAt1: true });
    send('launch', config);
  });
}

async function runProfile(kind: 'Run' | 'Debug', include?: unknown[]): Promise<Run> {
  const profile = controller.profiles.find((p) => p.label === kind)!;
  const before = controller.runs.length;
  await profile.handler({ include, exclude: [] }, { isCancellationRequested: false, onCancellationRequested: () => ({ dispose() {} }) });
  const run = controller.runs[before]!;
  expect(run.ended).toBe(true);
  return run;
}

beforeEach(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'lsop-test-explorer-'));
  writeFileSync(path.join(root, 'greet.sop'), PLAN);
  writeFileSync(path.join(root, 'greet.sop.test.json'), TESTS);
  writeFileSync(path.join(root, 'skills.mjs'), SKILLS);
  writeFileSync(path.join(root, 'lightsop.config.json'), '{ "skills": "./skills.mjs" }\n');
  writeFileSync(path.join(root, 'broken.sop.test.json'), '{ "tests": [ { "name": "x" } ');
  fake.state.root = root;
  fake.state.trusted = true;
  fake.state.controllers.length = 0;
  fake.state.watchers.length = 0;
  fake.state.terminated.length = 0;
  fake.state.launches.length = 0;
  debugged = new DebuggedTests();
  const output = { appendLine() {} };
  explorer = new PlanTestExplorer(debugged, output as never);
  controller = fake.state.controllers[0]!;
  traceStarts = 0;
  const startTrace = () => {
    traceStarts++;
    return Promise.resolve(null);
  };
  fake.state.launch = debugLauncher(new VsCodeDebugHost(new ResultsStore(), new RunHistory(), '0.0.0', debugged, startTrace));
  await controller.resolveHandler!(undefined);
});

afterEach(() => {
  explorer.dispose();
  rmSync(root, { recursive: true, force: true });
});

describe('the Test Explorer lists plan tests', () => {
  it('finds every test file, each test at its line; a broken file shows its error', () => {
    const ids = [...controller.items.map.keys()].sort();
    expect(ids).toEqual([`file://${root}/broken.sop.test.json`, `file://${root}/greet.sop.test.json`]);
    const file = controller.items.get(`file://${root}/greet.sop.test.json`)!;
    const children = [...file.children.map.values()];
    expect(children.map((c) => c.label)).toEqual(['greets', 'expects the wrong greeting', 'with the real skills']);
    // Each at the `{` that opens it, the line above its name.
    const names = ['"name": "greets"', '"name": "expects the wrong greeting"', '"name": "with the real skills"'];
    expect(children.map((c) => c.range!.start.line)).toEqual(names.map((n) => lineOf(TESTS, n) - 1));
    for (const c of children) expect(TESTS.split('\n')[c.range!.start.line]).toMatch(/^ {4}\{$/);
    const broken = controller.items.get(`file://${root}/broken.sop.test.json`)!;
    expect(broken.error).toMatch(/broken\.sop\.test\.json:1:\d+: not valid JSON/);
    expect(broken.children.size).toBe(0);
  });

  it('follows the watcher: a new file appears, a deleted one goes', () => {
    const added = path.join(root, 'more.sop.test.json');
    writeFileSync(added, '{ "plan": "greet.sop", "tests": [ { "name": "only", "mocks": [ { "command": "greet", "value": "x" }, { "command": "upper", "value": "X" } ] } ] }');
    for (const w of fake.state.watchers) for (const h of w.create) h(fake.vscode.Uri.file(added));
    expect(controller.items.get(`file://${added}`)?.children.size).toBe(1);
    rmSync(added);
    for (const w of fake.state.watchers) for (const h of w.del) h(fake.vscode.Uri.file(added));
    expect(controller.items.get(`file://${added}`)).toBeUndefined();
  });
});

describe('running plan tests', () => {
  it('Run: passes, fails at the expectation\'s line with expected and actual (the CLI\'s runner), and runs the skills in a trusted workspace', async () => {
    const run = await runProfile('Run');
    const outcome = run.outcome();
    expect(outcome.greets?.kind).toBe('passed');
    expect(outcome['with the real skills']?.kind).toBe('passed');
    const failed = outcome['expects the wrong greeting']!;
    expect(failed.kind).toBe('failed');
    const [message] = failed.messages!;
    expect(message!.message).toBe('@greeting: expected value "Hello, Bob", got "Hello, Ada"');
    expect(message!.expectedOutput).toBe('Hello, Bob');
    expect(message!.actualOutput).toBe('Hello, Ada');
    expect(message!.location!.uri.fsPath).toBe(path.join(root, 'greet.sop.test.json'));
    expect(message!.location!.range.line).toBe(lineOf(TESTS, '"greeting": "Hello, Bob"'));
    // The broken file is an error, with its place.
    expect(outcome['broken.sop.test.json']?.kind).toBe('errored');
    expect(existsSync(path.join(root, 'imported.marker'))).toBe(true);
  });

  it('untrusted: a test that needs the skills module is refused and the module is never imported; mock-only tests run', async () => {
    fake.state.trusted = false;
    const run = await runProfile('Run');
    const outcome = run.outcome();
    expect(outcome.greets?.kind).toBe('passed');
    expect(outcome['expects the wrong greeting']?.kind).toBe('failed');
    const refused = outcome['with the real skills']!;
    expect(refused.kind).toBe('errored');
    expect(refused.messages![0]!.message).toMatch(/not trusted.*"skills": true.*workspace code/);
    expect(existsSync(path.join(root, 'imported.marker'))).toBe(false);
  });

  it('Debug: runs the plan under the plan debugger with the test\'s mocks and judges it with the same runner', async () => {
    const file = controller.items.get(`file://${root}/greet.sop.test.json`)!;
    const [pass, fail] = [...file.children.map.values()];
    const run = await runProfile('Debug', [pass, fail]);
    const outcome = run.outcome();
    expect(outcome.greets?.kind).toBe('passed');
    const failed = outcome['expects the wrong greeting']!;
    expect(failed.kind).toBe('failed');
    expect(failed.messages![0]!.message).toBe('@greeting: expected value "Hello, Bob", got "Hello, Ada"');
    expect(failed.messages![0]!.location!.range.line).toBe(lineOf(TESTS, '"greeting": "Hello, Bob"'));
    expect(fake.state.launches.map((l) => [l.type, l.program])).toEqual([
      ['lightsoplang', path.join(root, 'greet.sop')],
      ['lightsoplang', path.join(root, 'greet.sop')],
    ]);
    // Mocks answered: no skills module was imported.
    expect(existsSync(path.join(root, 'imported.marker'))).toBe(false);
    expect(traceStarts).toBe(0);
  }, 30_000);
});
