/**
 * The language model of `lightsop run` (#!english plans) and `lightsop chat`: the settings from
 * the flags, the environment and the config in the contract's order, checked before anything
 * runs (a base URL that is not http(s), or that carries credentials, is a usage error naming
 * where it came from), and the client built with the CLI's log on standard error. The key is
 * remembered as a secret, so nothing the CLI prints can show it.
 */
import { OpenAiCompatibleAgent, resolveLlmSettings, type LlmSettings, type ModelCall } from '@lightsop/runtime';
import type { Config } from './config';
import { CliError } from './errors';
import type { Io } from './io';
import { baseUrlProblem } from './llm-url';
import { redact, rememberEnvironmentSecrets, rememberSecret, terminalText } from './terminal-text';

/** The LLM flags shared by `run` and `chat`. */
export interface LlmFlags {
  readonly llmBaseUrl?: string;
  readonly llmModel?: string;
  /** `--llm-timeout`, per request attempt, in milliseconds. */
  readonly llmTimeout?: number;
  /** `--llm-retries`. */
  readonly llmRetries?: number;
  /** `--max-tokens`: the token budget of an english plan or a chat session. */
  readonly maxTokens?: number;
}

/** The token budget: `--max-tokens`, else the config's `llm.maxTokens`, else none (null). */
export function resolveMaxTokens(flags: LlmFlags, config: Config | null | undefined): number | null {
  return flags.maxTokens ?? config?.llm?.maxTokens ?? null;
}

/** Resolves and checks the settings; throws a CliError with `exitCode` when the base URL is unusable. */
export function resolveLlm(flags: LlmFlags, env: NodeJS.ProcessEnv, config: Config | null | undefined, exitCode: number): LlmSettings {
  rememberEnvironmentSecrets(env);
  const settings = resolveLlmSettings(
    { baseUrl: flags.llmBaseUrl, model: flags.llmModel, timeoutMs: flags.llmTimeout, maxRetries: flags.llmRetries },
    env,
    config?.llm,
  );
  rememberSecret(settings.apiKey);
  if (settings.baseUrl) {
    const source = flags.llmBaseUrl ? '--llm-base-url' : env.LIGHTSOP_LLM_BASE_URL ? 'LIGHTSOP_LLM_BASE_URL' : `${config?.file ?? 'lightsop.config.json'}: field "llm.baseUrl"`;
    checkBaseUrl(settings.baseUrl, source, exitCode);
  }
  return settings;
}

function checkBaseUrl(url: string, source: string, exitCode: number): void {
  const problem = baseUrlProblem(url);
  if (problem) throw new CliError(`${source}: "${terminalText(redact(url))}": ${problem}`, exitCode);
}

/** The OpenAI-compatible client for checked settings; its log (OPENAI_LOG) goes to standard error. */
export function createLlmAgent(settings: LlmSettings & { baseUrl: string; model: string }, io: Io, onCall?: (call: ModelCall) => void): OpenAiCompatibleAgent {
  return new OpenAiCompatibleAgent({
    onCall,
    baseUrl: settings.baseUrl,
    model: settings.model,
    apiKey: settings.apiKey,
    timeoutMs: settings.timeoutMs,
    maxRetries: settings.maxRetries,
    log: (line) => io.stderr(`${terminalText(redact(line), { multiline: true })}\n`),
  });
}
