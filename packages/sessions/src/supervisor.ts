/**
 * The approval boundary as sessions use it (sessions.md 1.4): decision normalisation, the
 * per-session always-approve cache keyed by a stable serialisation, serialised approval calls,
 * denial texts and progress output. It never runs a tool itself.
 */
import { checkSignal, errorText } from './control';
import type { ApprovalVerdict, ProgressItem, SessionEvent, SessionLogger, Supervisor, ToolChoice } from './types';

/** JSON with object keys sorted recursively; arrays keep their order. */
export function stableStringify(value: unknown): string {
  const seen = new WeakSet<object>();
  const normalize = (v: unknown): unknown => {
    if (typeof v === 'bigint') return v.toString();
    if (typeof v !== 'object' || v === null) return v;
    if (seen.has(v)) return '[Circular]';
    seen.add(v);
    let out: unknown;
    if (Array.isArray(v)) out = v.map((item) => (item === undefined ? null : normalize(item)));
    else {
      const sorted: Record<string, unknown> = {};
      for (const key of Object.keys(v).sort()) {
        const item = (v as Record<string, unknown>)[key];
        if (item !== undefined && typeof item !== 'function') sorted[key] = normalize(item);
      }
      out = sorted;
    }
    seen.delete(v);
    return out;
  };
  const text = JSON.stringify(normalize(value));
  return text === undefined ? 'null' : text;
}

export interface NormalizedDecision {
  decision: ApprovalVerdict;
  reason?: string;
  approval?: unknown;
}

const VERDICTS = new Set<ApprovalVerdict>(['approve', 'alwaysApprove', 'deny']);

/** A bare verdict becomes `{ decision }`; anything unusable is a denial. */
export function normalizeDecision(raw: unknown): NormalizedDecision {
  if (typeof raw === 'string') {
    return VERDICTS.has(raw as ApprovalVerdict) ? { decision: raw as ApprovalVerdict } : { decision: 'deny', reason: 'supervisor returned an invalid decision' };
  }
  if (typeof raw !== 'object' || raw === null) return { decision: 'deny', reason: 'supervisor returned an invalid decision' };
  const d = raw as { decision?: unknown; reason?: unknown; approval?: unknown };
  if (!VERDICTS.has(d.decision as ApprovalVerdict)) return { decision: 'deny', reason: 'supervisor returned an invalid decision' };
  const out: NormalizedDecision = { decision: d.decision as ApprovalVerdict };
  if (typeof d.reason === 'string' && d.reason.trim() !== '') out.reason = d.reason;
  if ('approval' in d) out.approval = d.approval;
  return out;
}

/** The result text of a denied call: tool, input, optional reason, and that it was not run. */
export function denialText(toolName: string, params: unknown, reason?: string): string {
  const lines = [`Denied before execution: tool "${toolName}" was not run.`, `Input: ${stableStringify(params)}`];
  if (reason && reason.trim() !== '') lines.push(`Reason: ${reason}`);
  return lines.join('\n');
}

/** What one request to the gate came to: approved (with the supervisor's proof) or denied (with the denial text). */
export type GateResult =
  | { approved: true; approval: unknown; verdict: ApprovalVerdict | 'cached' }
  | { approved: false; reason?: string; text: string };

/**
 * One session's approvals: the always-approve cache (in memory, per session object) and a
 * chain that serialises `approve()` calls so a human sees one request at a time.
 */
export class ApprovalGate {
  private readonly cache = new Map<string, unknown>();
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly emit: (event: SessionEvent) => void) {}

  /** Number of cached always-approve entries (diagnostics and tests). */
  get cachedCount(): number {
    return this.cache.size;
  }

  /**
   * Asks the supervisor (or the cache) about one call. Throws PromptInterrupted when the
   * signal fired while waiting, even when a verdict arrived afterwards.
   */
  request(supervisor: Supervisor, choice: ToolChoice, signal: AbortSignal): Promise<GateResult> {
    const run = () => this.decide(supervisor, choice, signal);
    const result = this.chain.then(run, run);
    this.chain = result.catch(() => undefined);
    return result;
  }

  private async decide(supervisor: Supervisor, choice: ToolChoice, signal: AbortSignal): Promise<GateResult> {
    checkSignal(signal);
    const key = `${choice.toolName}\u0000${stableStringify(choice.params)}`;
    // A destructive tool is asked about every time: the cache neither answers nor remembers it.
    const cacheable = choice.destructive !== true;
    if (cacheable && this.cache.has(key)) {
      this.emit({ type: 'approval_resolved', choice, verdict: 'cached' });
      return { approved: true, approval: this.cache.get(key), verdict: 'cached' };
    }
    this.emit({ type: 'approval_requested', choice });
    let decision: NormalizedDecision;
    try {
      decision = normalizeDecision(await supervisor.approve(choice, { signal }));
    } catch (error) {
      checkSignal(signal);
      decision = { decision: 'deny', reason: `the supervisor failed: ${errorText(error)}` };
    }
    checkSignal(signal);
    this.emit({ type: 'approval_resolved', choice, verdict: decision.decision });
    if (decision.decision === 'deny') {
      return { approved: false, reason: decision.reason, text: denialText(choice.toolName, choice.params, decision.reason) };
    }
    const approval = decision.approval ?? null;
    if (decision.decision === 'alwaysApprove' && cacheable) this.cache.set(key, approval);
    return { approved: true, approval, verdict: decision.decision };
  }
}

/**
 * Writes one progress item to the supervisor's output writer, if any. Writer failures are
 * logged and ignored; the signal is checked afterwards by the caller.
 */
export async function writeProgress(supervisor: Supervisor | null | undefined, item: ProgressItem, log: SessionLogger): Promise<void> {
  if (!supervisor || typeof supervisor.getOutputWriter !== 'function') return;
  let writer;
  try {
    writer = supervisor.getOutputWriter();
  } catch (error) {
    log(`the supervisor's output writer could not be obtained: ${errorText(error)}`);
    return;
  }
  if (!writer) return;
  try {
    await writer.write(item);
  } catch (error) {
    log(`the output writer failed: ${errorText(error)}`);
  }
}

/** A supervisor that approves everything (for trusted, non-interactive hosts and tests). */
export const approveAllSupervisor: Supervisor = {
  async approve() {
    return 'approve';
  },
};

/** A supervisor that denies every call, with a reason. */
export function denyAllSupervisor(reason = 'approval is not available'): Supervisor {
  return {
    async approve() {
      return { decision: 'deny', reason };
    },
  };
}

/**
 * One more approval asked while an approved call runs, for something the first approval did not
 * cover (a redirect of `fetch_url` to another origin). It goes through the same gate, cache and
 * events as the call itself.
 */
export interface FollowUpRequest {
  toolName: string;
  /** The arguments the follow-up amounts to, as the command would take them. */
  args: readonly string[];
  /** Why it is asked, shown with the request (e.g. `redirected from …`). */
  reason: string;
}

/** Asks a session's supervisor (through its gate) about a follow-up of an approved call. */
export type FollowUpApprover = (request: FollowUpRequest) => Promise<GateResult>;

const supervisedPayloads = new WeakMap<object, FollowUpApprover | null>();

/**
 * Marks a command payload whose call a session's supervisor approved, so that skills which ask
 * for approval themselves (the standard skills) do not ask twice. `followUp` lets such a skill
 * ask the same supervisor about what the first approval did not cover.
 */
export function markSupervised(payload: object, followUp?: FollowUpApprover): void {
  supervisedPayloads.set(payload, followUp ?? null);
}

/** True when a session's supervisor approved this exact payload before the command ran. */
export function isSupervised(payload: object): boolean {
  return supervisedPayloads.has(payload);
}

/** The follow-up approver of a supervised payload, or null (then the skill's own supervisor is asked). */
export function followUpApprover(payload: object): FollowUpApprover | null {
  return supervisedPayloads.get(payload) ?? null;
}
