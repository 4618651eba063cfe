/**
 * Static analysis of a plan: parse, then the checks of section 4 in check order. This is the
 * single entry point that the CLI, the runtime and the language server share.
 */
import type { Plan } from '../ast';
import type { Diagnostic } from '../diagnostics/diagnostic';
import { parsePlan } from '../syntax/build-ast';
import type { LineIndex } from '../text/line-index';
import type { SyntaxTree } from '../syntax/tree';
import { CommandSurface, type SkillsDescription } from '../commands/surface';
import { checkCommands } from './skills';
import { buildSymbols, type Symbols } from './symbols';
import { checkCycles, checkUndefined } from './topology';
import { checkUnused } from './unused';

export interface AnalyzeOptions {
  /**
   * The commands plans may call, as a surface or as a skills description; `unknown-command` is
   * only checked when they are given (`commands` wins over `skills`).
   */
  readonly commands?: CommandSurface | null;
  readonly skills?: SkillsDescription | null;
  /**
   * Whether the implicit `input` variable exists. Lint and the language server cannot know, so
   * the default is true; `lightsop run` passes whether `--input` was given.
   */
  readonly inputDeclared?: boolean;
}

export interface Analysis {
  readonly source: string;
  readonly plan: Plan;
  /** Every diagnostic, in check order (4.1). */
  readonly diagnostics: readonly Diagnostic[];
  readonly lineIndex: LineIndex;
  readonly symbols: Symbols;
  /** The compact syntax tree; `plan`'s nodes are materialised from it on access. */
  readonly tree: SyntaxTree;
  /** The `inputDeclared` it was made with (default true): which `$input` references are errors. */
  readonly inputDeclared: boolean;
  /** Whether a command surface was checked (`unknown-command` diagnostics may be among them). */
  readonly commandsChecked: boolean;
}

/** Parses and validates a plan. Never throws on user text. */
export function analyzePlan(source: string, options: AnalyzeOptions = {}): Analysis {
  const { plan, diagnostics, lineIndex, tree } = parsePlan(source);
  const symbols = buildSymbols(plan, tree);
  let all: Diagnostic[] = diagnostics;
  const inputDeclared = options.inputDeclared ?? true;
  const commands = options.commands ?? (options.skills ? CommandSurface.fromDescription(options.skills) : null);
  if (!plan.english) {
    // concat, not push(...): a large plan can have more diagnostics than a call has arguments.
    all = all.concat(
      checkUndefined(tree, inputDeclared),
      checkCycles(tree),
      commands ? checkCommands(tree, commands) : [],
      checkUnused(tree),
    );
  }
  return { source, plan, diagnostics: all, lineIndex, symbols, tree, inputDeclared, commandsChecked: commands !== null };
}
