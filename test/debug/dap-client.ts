/**
 * A Debug Adapter Protocol client for tests: talks to a PlanDebugSession in-process through the
 * same interface VS Code's inline adapters use (`handleMessage` / `onDidSendMessage`), and a
 * fake host with a test registry and a record of what reached the results store.
 */
import type { DebugProtocol } from '@vscode/debugprotocol';
import type { CommandRegistry } from '@lightsop/runtime';
import {
  LaunchError, PlanDebugSession, type DebugHost, type PlanLaunchArguments, type PlanSkills, type PlanSource,
} from '../../extension/src/debug/adapter';
import type { VariableState } from '../../extension/src/run/results';

export const PLAN_PATH = '/work/plans/plan.sop';
export const PLAN_URI = 'file:///work/plans/plan.sop';

export class FakeHost implements DebugHost {
  readonly published: { states: readonly VariableState[]; reset: boolean }[] = [];
  /** The last state of each variable that reached the store. */
  readonly store = new Map<string, VariableState>();
  loadSkillsCalls = 0;

  constructor(
    private readonly text: string,
    private readonly registry: CommandRegistry,
    private readonly refuseSkills: LaunchError | null = null,
  ) {}

  async readPlan(args: PlanLaunchArguments): Promise<PlanSource> {
    if (args.program !== PLAN_PATH) throw new LaunchError(`Cannot read the plan ${String(args.program)}`);
    return { path: PLAN_PATH, uri: PLAN_URI, text: this.text };
  }

  async loadSkills(): Promise<PlanSkills> {
    this.loadSkillsCalls++;
    if (this.refuseSkills) throw this.refuseSkills;
    return { registry: this.registry, note: 'skills: test registry' };
  }

  publish(uri: string, states: readonly VariableState[], reset: boolean): void {
    if (uri !== PLAN_URI) throw new Error(`published for ${uri}`);
    this.published.push({ states, reset });
    if (reset) this.store.clear();
    for (const s of states) this.store.set(s.name, s);
  }
}

type Message = DebugProtocol.ProtocolMessage;

export class DapClient {
  readonly adapter: PlanDebugSession;
  readonly events: DebugProtocol.Event[] = [];
  private readonly consumed = new Set<DebugProtocol.Event>();
  private readonly pending = new Map<number, (r: DebugProtocol.Response) => void>();
  private readonly listeners = new Set<() => void>();
  private seq = 1;

  constructor(readonly host: FakeHost) {
    this.adapter = new PlanDebugSession(host);
    this.adapter.onDidSendMessage((m) => this.receive(m as Message));
  }

  private receive(m: Message): void {
    if (m.type === 'response') {
      const r = m as DebugProtocol.Response;
      this.pending.get(r.request_seq)?.(r);
      this.pending.delete(r.request_seq);
    } else if (m.type === 'event') {
      this.events.push(m as DebugProtocol.Event);
      for (const l of [...this.listeners]) l();
    }
  }

  /** Sends a request; resolves with its response (success or not) within `timeout` ms. */
  request<R extends DebugProtocol.Response = DebugProtocol.Response>(command: string, args?: unknown, timeout = 15000): Promise<R> {
    const seq = this.seq++;
    return new Promise<R>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(seq);
        reject(new Error(`no response to ${command} within ${timeout} ms`));
      }, timeout);
      this.pending.set(seq, (r) => {
        clearTimeout(timer);
        resolve(r as R);
      });
      this.adapter.handleMessage({ seq, type: 'request', command, arguments: args } as DebugProtocol.Request);
    });
  }

  /** Like `request`, but fails the test when the response is an error. */
  async ok<R extends DebugProtocol.Response = DebugProtocol.Response>(command: string, args?: unknown): Promise<R> {
    const r = await this.request<R>(command, args);
    if (!r.success) throw new Error(`${command} failed: ${r.message}`);
    return r;
  }

  /** The first event named `name` (matching `pred`) not returned before; waits up to `timeout` ms. */
  nextEvent<E extends DebugProtocol.Event = DebugProtocol.Event>(name: string, pred: (e: E) => boolean = () => true, timeout = 15000): Promise<E> {
    const find = () => this.events.find((e) => !this.consumed.has(e) && e.event === name && pred(e as E)) as E | undefined;
    return new Promise<E>((resolve, reject) => {
      const check = () => {
        const e = find();
        if (!e) return false;
        this.consumed.add(e);
        this.listeners.delete(check);
        clearTimeout(timer);
        resolve(e);
        return true;
      };
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(new Error(`no ${name} event within ${timeout} ms; events: ${this.events.map((e) => e.event).join(', ')}`));
      }, timeout);
      if (!check()) this.listeners.add(check);
    });
  }

  /** The Debug Console text so far. */
  output(): string {
    return this.events.filter((e) => e.event === 'output').map((e) => (e as DebugProtocol.OutputEvent).body.output).join('');
  }

  /** initialize, launch, breakpoints, configurationDone: what VS Code sends to start a session. */
  async start(args: Omit<PlanLaunchArguments, 'program'> & { program?: string }, breakpointLines: number[] = []): Promise<DebugProtocol.SetBreakpointsResponse> {
    await this.ok('initialize', { adapterID: 'lightsoplang', clientID: 'test', pathFormat: 'path', linesStartAt1: true, columnsStartAt1: true });
    const launch = this.request('launch', { program: PLAN_PATH, ...args });
    await this.nextEvent('initialized');
    const bps = await this.ok<DebugProtocol.SetBreakpointsResponse>('setBreakpoints', { source: { path: PLAN_PATH }, breakpoints: breakpointLines.map((line) => ({ line })) });
    await this.ok('configurationDone');
    const launched = await launch;
    if (!launched.success) throw new Error(`launch failed: ${launched.message}`);
    return bps;
  }

  async stoppedAt(): Promise<{ reason: string; frame: DebugProtocol.StackFrame; hit: number[] }> {
    const stopped = await this.nextEvent<DebugProtocol.StoppedEvent>('stopped');
    const trace = await this.ok<DebugProtocol.StackTraceResponse>('stackTrace', { threadId: stopped.body.threadId });
    return { reason: stopped.body.reason, frame: trace.body.stackFrames[0]!, hit: stopped.body.hitBreakpointIds ?? [] };
  }

  /** The variables of the scope named like `scope` in the paused frame, as `name: value`. */
  async scope(scope: RegExp): Promise<DebugProtocol.Variable[]> {
    const scopes = await this.ok<DebugProtocol.ScopesResponse>('scopes', { frameId: 1 });
    const found = scopes.body.scopes.find((s) => scope.test(s.name));
    if (!found) throw new Error(`no scope ${scope} in ${scopes.body.scopes.map((s) => s.name).join(', ')}`);
    return (await this.ok<DebugProtocol.VariablesResponse>('variables', { variablesReference: found.variablesReference })).body.variables;
  }
}

export function table(vars: readonly DebugProtocol.Variable[]): Record<string, string> {
  return Object.fromEntries(vars.map((v) => [v.name, v.value]));
}
