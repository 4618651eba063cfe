/**
 * Token budgets (`--max-tokens`, config `llm.maxTokens`): the tokens an `#!english` plan or a
 * session may spend, counted from the usage the provider reports for each request. A request
 * starts only while the count is below the limit; one request can overshoot it (its size is known
 * only from its answer), and none starts after that. A refused request throws
 * `TokenBudgetExceededError`, which the interpreter treats as the end of generation (no further
 * round, no revision) rather than as a failed round.
 */
import type { LlmAgent, PromptOptions, TokenUsage } from './agent';
import { PlanGenerationError } from '../errors';

/** A request was refused because the token budget was spent. */
export class TokenBudgetExceededError extends PlanGenerationError {
  constructor(readonly maxTokens: number, readonly usedTokens: number) {
    super(`token budget reached: ${usedTokens} of ${maxTokens} tokens used (--max-tokens, llm.maxTokens); no further model request was made`, 0);
    this.name = 'TokenBudgetExceededError';
  }
}

/** Counts the tokens spent; `maxTokens` null counts without a limit. */
export class TokenBudget {
  inputTokens = 0;
  outputTokens = 0;
  requests = 0;
  /** Set once a request was refused. */
  refused = false;

  constructor(readonly maxTokens: number | null = null) {
    if (maxTokens !== null && !(Number.isSafeInteger(maxTokens) && maxTokens > 0)) throw new RangeError(`maxTokens must be a positive integer (got ${String(maxTokens)})`);
  }

  get totalTokens(): number {
    return this.inputTokens + this.outputTokens;
  }

  /** True when no further request may start. */
  get exhausted(): boolean {
    return this.maxTokens !== null && this.totalTokens >= this.maxTokens;
  }

  add(usage: TokenUsage): void {
    this.requests++;
    this.inputTokens += usage.inputTokens;
    this.outputTokens += usage.outputTokens;
  }

  /** Throws `TokenBudgetExceededError` (and remembers the refusal) when no further request may start. */
  check(): void {
    if (!this.exhausted) return;
    this.refused = true;
    throw new TokenBudgetExceededError(this.maxTokens!, this.totalTokens);
  }

  /** The counts as plain data (for `--json` and the chat panel). */
  toJSON(): { inputTokens: number; outputTokens: number; totalTokens: number; maxTokens: number | null; exhausted: boolean } {
    return { inputTokens: this.inputTokens, outputTokens: this.outputTokens, totalTokens: this.totalTokens, maxTokens: this.maxTokens, exhausted: this.refused };
  }
}

/**
 * `agent` with every request counted by `budget` and refused once it is spent. Usage comes from
 * the provider through `PromptOptions.onUsage` (the caller's own `onUsage` is still called).
 */
export function withTokenBudget(agent: LlmAgent, budget: TokenBudget): LlmAgent {
  return {
    async executePrompt(prompt: string, options: PromptOptions = {}): Promise<string> {
      budget.check();
      const callers = options.onUsage;
      return agent.executePrompt(prompt, {
        ...options,
        onUsage: (usage) => {
          budget.add(usage);
          callers?.(usage);
        },
      });
    },
  };
}
