/**
 * The prompt that asks a model for a plan (8.2) and the reading of its answer (8.3). Labels and
 * round phrases are normative: scripted test agents recognise rounds by them.
 */

export interface GenerationRequest {
  instructions: string;
  /** Number of generations so far. */
  attempt: number;
  reason: 'initial' | 'failure';
  failures: { variable: string; reason: unknown }[];
  variables: { name: string; status: string; value: unknown; raw: string }[];
  previousCode: string | null;
  history: { attempt: number; reason: string; prompt: string; code: string }[];
  commands: { name: string; description: string }[];
}

export const FINAL_COMMANDS = ['final_answer', 'cannot_complete'];

/** Final commands are available when the registry lists one of them. */
export function finalCommandsAvailable(commands: readonly { name: string }[]): boolean {
  return commands.some((c) => FINAL_COMMANDS.includes(c.name));
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Builds the generation prompt for a request (and the input, when one is supplied). */
export function buildGenerationPrompt(request: GenerationRequest, input: { supplied: boolean; value?: unknown }): string {
  const finals = finalCommandsAvailable(request.commands);
  const lines: string[] = [];
  lines.push('Emit LightSOPLang code. Format: @varName command arg1 arg2');
  lines.push('Args: space-separated, NO parentheses/commas. Quote strings with spaces. Use $var to reference previous results.');
  lines.push('Long text goes on the lines after a declaration and becomes one multi-line argument (no line of it may start with @).');
  lines.push('Put a short # progress comment directly above each user-visible step.');
  lines.push('Example: @sum add 5 3');
  lines.push('@upper uppercase "hello world"');
  lines.push('@combined concat $sum $upper');
  if (finals) lines.push('@lastAnswer final_answer $combined');
  lines.push('');
  lines.push('Rules: Use ONLY listed commands, plus assign for local text. No interpolation in strings (pass values as separate args). No markdown fences.');
  lines.push('The command list is the only executable surface: never use command, skill or orchestrator names from the instructions or the input unless they are listed.');
  if (finals) {
    lines.push('If answerable without commands: @lastAnswer final_answer "your answer"');
    lines.push('Always end with @lastAnswer final_answer or cannot_complete.');
  }
  lines.push('');
  lines.push(request.reason === 'initial'
    ? 'Generate an initial script that meets the instructions.'
    : `Attempt ${request.attempt}: revise the script to address reported issues.`);
  lines.push('Instructions:');
  lines.push(request.instructions);
  if (input.supplied) {
    lines.push('Input context:');
    lines.push(text(input.value));
  }
  if (request.commands.length > 0) {
    lines.push('Commands:');
    for (const c of request.commands) lines.push(`- ${c.name}: ${c.description}`);
  }
  if (request.reason === 'failure') {
    if (request.previousCode !== null) {
      lines.push('Previous code:');
      lines.push(request.previousCode);
    }
    lines.push('Failures:');
    for (const f of request.failures) lines.push(`- ${f.variable}: ${String(f.reason)}`);
    lines.push('Variable snapshot:');
    for (const v of request.variables) lines.push(`- ${v.name}: ${v.status} => ${String(v.value)}`);
  }
  lines.push('Output ONLY LightSOPLang code, no fences or explanations.');
  return lines.join('\n');
}

const FENCE = /^```[A-Za-z0-9_]*[ \t]*\r?\n([\s\S]*?)\r?\n[ \t]*```\s*$/;

/** Unwraps an answer made of exactly one fenced block; otherwise returns it as is. */
export function stripFences(answer: string): string {
  const trimmed = answer.trim();
  const match = FENCE.exec(trimmed);
  return match ? match[1]!.trim() : answer;
}
