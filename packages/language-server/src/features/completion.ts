/**
 * Completion. The context comes from the current text of the cursor's line (a small scan that
 * follows spec 1.3 to 1.5: line start, comment scan, quoted and bare tokens), so it is right
 * even while the plan is half typed: at an empty line, snippets; in the name token after `@`,
 * snippets and names that are used but not declared; in the command position, the commands of
 * the skills description and the built-ins; in an argument position, `$` variables. Inside a
 * string, a comment or plain text there is nothing to offer. The variables come from the
 * latest analysis, which may be one version behind on a very large plan (the server decides).
 */
import { FINAL_ANSWER, findInlineComment, isFinalCommand, isWhitespace, isZeroWidth, type Plan } from '@lightsop/core';
import {
  CompletionItemKind,
  InsertTextFormat,
  type CompletionItem,
  type CompletionList,
  type Position,
} from 'vscode-languageserver';
import type { AnalyzedDocument } from '../documents';
import type { PositionMap } from '../to-lsp';
import type { SkillsContext } from '../workspace';
import { availableCommands, commandDetail, commandDocumentation, commandOrigin, type CommandOrigin } from './commands';
import { excerpt } from './locate';

export interface CompletionInput {
  /** The document's current text and its positions (what the request's position refers to). */
  readonly text: string;
  readonly positions: PositionMap;
  /** The latest analysis (possibly of an earlier version), for variables and commands in use. */
  readonly analyzed: AnalyzedDocument;
  readonly skills: SkillsContext;
}

export interface CompletionOptions {
  /** Whether the client accepts snippet syntax. */
  readonly snippets: boolean;
  /** At most this many variables are returned; the list is then marked incomplete. */
  readonly maxVariables?: number;
}

/** Where the cursor is, syntactically. `from` is where the word being completed starts. */
type Context =
  | { readonly kind: 'line-start'; readonly from: number }
  | { readonly kind: 'name'; readonly from: number; readonly restOfLineBlank: boolean }
  | { readonly kind: 'command'; readonly from: number }
  | { readonly kind: 'argument'; readonly from: number; readonly declName: string }
  | { readonly kind: 'none' };

const NONE: Context = { kind: 'none' };

/** The completion context at `offset` in `text`. */
export function completionContext(text: string, offset: number): Context {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  let i = lineStart;
  while (i < offset && isZeroWidth(text.charCodeAt(i))) i++;
  const zwEnd = i;
  while (i < offset && isWhitespace(text.charCodeAt(i))) i++;
  if (i === offset) {
    // Only offer new declarations on a line that is empty after the cursor too.
    let j = offset;
    while (j < text.length && text.charCodeAt(j) !== 10 && isWhitespace(text.charCodeAt(j))) j++;
    return j === text.length || text.charCodeAt(j) === 10 ? { kind: 'line-start', from: offset } : NONE;
  }
  if (text.charCodeAt(i) !== 64 /* @ */) return NONE;
  if (findInlineComment(text, zwEnd, offset) !== -1) return NONE;

  const tokens: { start: number; end: number; quoted: boolean }[] = [];
  let j = i;
  while (j < offset) {
    const c = text.charCodeAt(j);
    if (isWhitespace(c)) {
      j++;
      continue;
    }
    const start = j;
    if ((c === 34 || c === 39) && tokens.length > 0) {
      j++;
      let closed = false;
      while (j < offset) {
        const d = text.charCodeAt(j);
        if (d === 92) j += 2;
        else if (d === c) {
          j++;
          closed = true;
          break;
        } else j++;
      }
      if (!closed || j > offset) return NONE; // the cursor is inside a string
      tokens.push({ start, end: j, quoted: true });
    } else {
      while (j < offset && !isWhitespace(text.charCodeAt(j))) j++;
      tokens.push({ start, end: j, quoted: false });
    }
  }
  const last = tokens[tokens.length - 1]!;
  let index: number;
  let from: number;
  if (last.end === offset) {
    if (last.quoted) return NONE; // right after a closing quote
    index = tokens.length - 1;
    from = last.start;
  } else {
    index = tokens.length;
    from = offset;
  }
  if (index === 0) {
    let k = offset;
    while (k < text.length && text.charCodeAt(k) !== 10 && isWhitespace(text.charCodeAt(k))) k++;
    return { kind: 'name', from, restOfLineBlank: k === text.length || text.charCodeAt(k) === 10 };
  }
  if (index === 1) return { kind: 'command', from };
  const prefix = text.slice(from, offset);
  if (prefix !== '' && !prefix.startsWith('$')) return NONE;
  return { kind: 'argument', from, declName: text.slice(tokens[0]!.start + 1, tokens[0]!.end) };
}

/** Escapes text for use inside a snippet placeholder or choice. */
function snippetText(s: string, inChoice = false): string {
  return s.replace(inChoice ? /[$}\\,|]/g : /[$}\\]/g, '\\$&');
}

/** A command as it must be written: quoted when it has characters a bare token cannot hold. */
function commandToken(name: string): string {
  return /[\s"'#\\]/.test(name) || name === '' ? `"${name.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"` : name;
}

/** The last declared name before `offset` that is not a final step, for the final-answer snippet. */
function lastValueBefore(plan: Plan, offset: number): string | null {
  let found: string | null = null;
  for (const d of plan.declarations) {
    if (d.headerRange.start >= offset) break;
    if (d.name !== '' && d.command && !isFinalCommand(d.command.name)) found = d.name;
  }
  return found;
}

function snippetItems(input: CompletionInput, ctx: { from: number }, offset: number, options: CompletionOptions): CompletionItem[] {
  const range = input.positions.range({ start: ctx.from, end: offset });
  const commands = availableCommands(input.skills, input.analyzed.analysis.plan).filter((c) => commandOrigin(c) === 'skills');
  const lastValue = lastValueBefore(input.analyzed.analysis.plan, offset) ?? 'result';
  const choice = commands.length > 0 && commands.length <= 30
    ? `\${2|${commands.map((c) => snippetText(c.name, true)).join(',')}|}`
    : '${2:command}';
  const items: { label: string; detail: string; snippet: string; plain: string; doc: string }[] = [
    {
      label: '@name command',
      detail: 'New declaration',
      snippet: `@\${1:name} ${choice} $0`,
      plain: `@name ${commands[0]?.name ?? 'command'} `,
      doc: 'Declares a variable whose value is the result of a command; `$name` arguments make it wait for other variables.',
    },
    {
      label: '@name assign here-doc',
      detail: 'Here-doc: multi-line literal text',
      snippet: '@${1:name} assign\n--begin-${2:TEXT}--\n$0\n--end-${2:TEXT}--',
      plain: '@name assign\n--begin-TEXT--\n\n--end-TEXT--',
      doc: 'An `assign` here-doc: every line between the markers is kept verbatim, `$` and `#` included.',
    },
    {
      label: `@lastAnswer ${FINAL_ANSWER}`,
      detail: "Final answer: the plan's result",
      snippet: `@\${1:lastAnswer} ${FINAL_ANSWER} \\$\${2:${snippetText(lastValue)}}$0`,
      plain: `@lastAnswer ${FINAL_ANSWER} $${lastValue}`,
      doc: "Declares the plan's answer for the user.",
    },
  ];
  return items.map((s, i) => ({
    label: s.label,
    kind: CompletionItemKind.Snippet,
    detail: s.detail,
    documentation: { kind: 'markdown', value: s.doc },
    sortText: `0${i}`,
    filterText: s.label,
    insertTextFormat: options.snippets ? InsertTextFormat.Snippet : InsertTextFormat.PlainText,
    textEdit: { range, newText: options.snippets ? s.snippet : s.plain },
  }));
}

function commandItems(input: CompletionInput, from: number, offset: number): CompletionItem[] {
  const range = input.positions.range({ start: from, end: offset });
  const order: Record<CommandOrigin, string> = { skills: '0', plan: '1', 'built-in': '2', reserved: '3' };
  return availableCommands(input.skills, input.analyzed.analysis.plan).map((c) => {
    const origin = commandOrigin(c);
    return {
      label: c.name,
      kind: CompletionItemKind.Function,
      detail: commandDetail(c, input.skills.source),
      documentation: commandDocumentation(c) !== '' ? { kind: 'markdown', value: commandDocumentation(c) } : undefined,
      sortText: `${order[origin]}${c.name}`,
      textEdit: { range, newText: commandToken(c.name) },
    };
  });
}

/** True when the characters of `needle` appear in order in `hay` (case-insensitive). */
function fuzzyMatch(needle: string, hay: string): boolean {
  if (needle === '') return true;
  const n = needle.toLowerCase();
  const h = hay.toLowerCase();
  let k = 0;
  for (let i = 0; i < h.length && k < n.length; i++) if (h[i] === n[k]) k++;
  return k === n.length;
}

/**
 * The `$` variables matching what is typed, nearest first: the declarations above the cursor
 * from the closest up, then those below it in order, then the implicit `input`. Declared names
 * come in source order, so this is a walk out from the cursor that stops after `max` matches:
 * no sort, and only the shown declarations are materialised.
 */
function variableItems(input: CompletionInput, ctx: { from: number; declName: string }, offset: number, max: number): { items: CompletionItem[]; incomplete: boolean } {
  const { analyzed, positions, text } = input;
  const declared = analyzed.declared;
  const typed = text.slice(ctx.from, offset).replace(/^\$/, '');
  const range = positions.range({ start: ctx.from, end: offset });
  const shown: { name: string; k: number }[] = [];
  let incomplete = false;
  const offer = (name: string, k: number): boolean => {
    if (name === ctx.declName || !fuzzyMatch(typed, name)) return true;
    if (shown.length === max) {
      incomplete = true;
      return false;
    }
    shown.push({ name, k });
    return true;
  };
  // The first declared name whose header starts at or after the cursor.
  let lo = 0;
  let hi = declared.size;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (declared.headerStart(mid) < offset) lo = mid + 1;
    else hi = mid;
  }
  let more = true;
  for (let k = lo - 1; more && k >= 0; k--) more = offer(declared.name(k), k);
  for (let k = lo; more && k < declared.size; k++) more = offer(declared.name(k), k);
  if (more && !declared.has('input')) offer('input', -1);
  const items = shown.map((c, i): CompletionItem => {
    const item: CompletionItem = {
      label: `$${c.name}`,
      kind: CompletionItemKind.Variable,
      sortText: String(i).padStart(6, '0'),
      filterText: `$${c.name}`,
      textEdit: { range, newText: `$${c.name}` },
    };
    if (c.k >= 0) {
      const decl = declared.declaration(c.k);
      const header = decl.command ? excerpt(analyzed.text, { start: decl.command.range.start, end: decl.headerRange.end }, 80) : '';
      item.detail = header;
      if (decl.comment) item.documentation = { kind: 'markdown', value: decl.comment };
    } else {
      item.detail = 'implicit: the input the host supplies';
    }
    return item;
  });
  return { items, incomplete };
}

/** Names used as `$name` but declared nowhere, offered after `@` to declare them. */
function missingNameItems(input: CompletionInput, from: number, offset: number, trailingSpace: boolean): CompletionItem[] {
  const { symbols } = input.analyzed.analysis;
  const range = input.positions.range({ start: from, end: offset });
  const out: CompletionItem[] = [];
  for (const [name] of symbols.references) {
    if (name === '' || name === 'input' || symbols.declarations.has(name)) continue;
    out.push({
      label: `@${name}`,
      kind: CompletionItemKind.Variable,
      detail: 'used but not declared',
      sortText: `1${name}`,
      filterText: `@${name}`,
      textEdit: { range, newText: trailingSpace ? `@${name} ` : `@${name}` },
    });
  }
  return out;
}

/** The completion list at a position of the current text. */
export function getCompletions(input: CompletionInput, position: Position, options: CompletionOptions): CompletionList {
  const offset = input.positions.offset(position);
  const ctx = completionContext(input.text, offset);
  switch (ctx.kind) {
    case 'line-start':
      return { isIncomplete: false, items: snippetItems(input, ctx, offset, options) };
    case 'name':
      // Snippets would clash with a header that already goes on after the cursor.
      return {
        isIncomplete: false,
        items: [
          ...(ctx.restOfLineBlank ? snippetItems(input, ctx, offset, options) : []),
          ...missingNameItems(input, ctx.from, offset, ctx.restOfLineBlank),
        ],
      };
    case 'command':
      return { isIncomplete: false, items: commandItems(input, ctx.from, offset) };
    case 'argument': {
      const { items, incomplete } = variableItems(input, ctx, offset, options.maxVariables ?? 200);
      return { isIncomplete: incomplete, items };
    }
    default:
      return { isIncomplete: false, items: [] };
  }
}
