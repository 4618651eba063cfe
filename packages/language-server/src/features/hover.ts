/**
 * Hover: a command's description (from the skills description or the built-ins); a variable's
 * declaration with its comment, dependencies and dependents; what a literal really is (decoded
 * escapes, text that looks like a reference but is not). Markdown only; no connection access.
 */
import { dependentsOf, type Declaration } from '@lightsop/core';
import type { Hover, Position } from 'vscode-languageserver';
import type { AnalyzedDocument } from '../documents';
import { commandDocumentation, commandInfo, commandOrigin, usageLine } from './commands';
import { excerpt, targetAt, type Target } from './locate';

/** The longest run of backticks in the text (a loop: a text can hold 200k runs). */
function longestBacktickRun(text: string): number {
  let longest = 0;
  for (const run of text.matchAll(/`+/g)) longest = Math.max(longest, run[0].length);
  return longest;
}

/** Inline code that survives backticks inside the text. */
export function inlineCode(text: string): string {
  const longest = longestBacktickRun(text);
  const ticks = '`'.repeat(longest + 1);
  const pad = text.startsWith('`') || text.endsWith('`') || text === '' ? ' ' : '';
  return `${ticks}${pad}${text}${pad}${ticks}`;
}

/** A fenced code block that survives backtick runs inside the text. */
export function codeBlock(text: string, language = 'lightsoplang'): string {
  const longest = Math.max(2, longestBacktickRun(text));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${language}\n${text}\n${fence}`;
}

function nameList(names: readonly string[], max = 12): string {
  const shown = names.slice(0, max).map(inlineCode).join(', ');
  return names.length > max ? `${shown} and ${names.length - max} more` : shown;
}

/** Markdown describing a declared variable (used by hover and completion). */
export function describeDeclaration(doc: AnalyzedDocument, decl: Declaration): string {
  const { analysis, text } = doc;
  const parts: string[] = [codeBlock(excerpt(text, decl.headerRange, 400))];
  const first = analysis.symbols.declarations.get(decl.name);
  if (first && first !== decl) {
    parts.push(`Duplicate: ${inlineCode(decl.name)} is first declared on line ${first.lineNumber}; this declaration never runs.`);
  }
  const extra = decl.arguments.find((a) => a.kind === 'literal' && a.origin !== 'header');
  if (extra && extra.kind === 'literal') {
    const lines = extra.value === '' ? 0 : extra.value.split('\n').length;
    parts.push(`${extra.origin === 'heredoc' ? 'Here-doc' : 'Multi-line text'} argument: ${lines} line${lines === 1 ? '' : 's'}.`);
  }
  if (decl.comment) parts.push(decl.comment);
  const facts: string[] = [];
  if (decl.dependencies.length > 0) facts.push(`Depends on: ${nameList(decl.dependencies)}`);
  if (decl.name !== '' && first === decl) {
    const users = dependentsOf(analysis.symbols, decl.name);
    facts.push(users.length > 0 ? `Used by: ${nameList(users)}` : 'Not used by any declaration');
  }
  if (facts.length > 0) parts.push(facts.join('  \n'));
  return parts.join('\n\n');
}

function describeCommand(doc: AnalyzedDocument, name: string): string {
  const info = commandInfo(name, doc.skills);
  const origin = info ? commandOrigin(info) : 'skills';
  const head = `**${origin === 'skills' ? 'command' : `${origin} command`}** ${inlineCode(name)}`;
  if (info) {
    const facts: string[] = [];
    if (info.source.kind === 'mcp') {
      return [head, inlineCode(usageLine(info)), commandDocumentation(info) || '*(no description)*', `*Tool of the MCP server ${inlineCode(info.source.name ?? '')}.*`].join('\n\n');
    }
    if (info.parameters && info.parameters.length > 0) facts.push(`Parameters: ${info.parameters.map((p) => inlineCode(p.name)).join(', ')}`);
    if (info.sideEffects !== undefined && origin === 'skills') facts.push(info.sideEffects ? 'Has side effects: sessions ask for approval.' : 'No side effects.');
    const from = origin === 'skills' && doc.skills.source ? `*From ${inlineCode(doc.skills.source)}.*` : '';
    return [head, info.description || '*(no description)*', facts.join('  \n'), from].filter((p) => p !== '').join('\n\n');
  }
  if (doc.skills.commands) return `${head}\n\nNot in the skills description${doc.skills.source ? ` (${inlineCode(doc.skills.source)})` : ''}.`;
  return `${head}\n\nNo skills description is configured, so commands are not checked. Name one with \`"skills"\` in \`lightsop.config.json\`.`;
}

function describeLiteral(doc: AnalyzedDocument, t: Extract<Target, { kind: 'literal' }>): string {
  const { arg, decl } = t;
  if (arg.origin === 'heredoc' || arg.origin === 'continuation') {
    const lines = arg.value === '' ? 0 : arg.value.split('\n').length;
    const what = arg.origin === 'heredoc' ? 'Here-doc body' : 'Multi-line text';
    return `${what} of ${inlineCode(`@${decl.name}`)}: one argument of ${lines} line${lines === 1 ? '' : 's'}, passed verbatim. ` +
      '`$name` and `#` in it are plain text.';
  }
  const raw = doc.text.slice(arg.range.start, arg.range.end);
  const shown = JSON.stringify(arg.value).slice(1, -1);
  const notes: string[] = [`Literal text ${inlineCode(shown)}`];
  if (arg.quote && arg.value.startsWith('$')) notes.push('Quoted, so it is text and not a reference.');
  else if (arg.quote && raw.slice(1, -1) !== arg.value) notes.push('Escapes are decoded: a backslash keeps the next character (`\\n`, `\\t`, `\\r` are line feed, tab and carriage return).');
  else if (!arg.quote && arg.value.includes('$')) notes.push('Only an unquoted argument that starts with `$` is a reference.');
  return notes.join('\n\n');
}

/** The hover at a position, or null when there is nothing to say. */
export function getHover(doc: AnalyzedDocument, position: Position): Hover | null {
  const offset = doc.positions.offset(position);
  const t = targetAt(doc.analysis.plan, offset);
  if (!t) return null;
  let value: string | null = null;
  switch (t.kind) {
    case 'declaration':
      value = t.decl.name === '' ? null : describeDeclaration(doc, t.decl);
      break;
    case 'reference': {
      const decl = doc.analysis.symbols.declarations.get(t.ref.name);
      if (decl) value = describeDeclaration(doc, decl);
      else if (t.ref.name === 'input') value = '**implicit variable** `input`\n\nThe input the host supplies (`lightsop run --input TEXT`). Without an input, `$input` is undefined.';
      else if (t.ref.name === '') value = 'A lone `$` refers to the empty name, which can never be declared.';
      else value = `${inlineCode(t.ref.name)} is not declared in this plan.`;
      break;
    }
    case 'command':
      value = describeCommand(doc, t.command.name);
      break;
    case 'literal':
      value = describeLiteral(doc, t);
      break;
    case 'heredoc-marker':
      value = `Here-doc ${inlineCode(t.body.token)}: the lines between ${inlineCode(`--begin-${t.body.token}--`)} and ${inlineCode(`--end-${t.body.token}--`)} are one literal argument.` +
        (t.body.endRange ? '' : ' The end marker is missing.');
      break;
    case 'comment':
      value = t.comment.text === '' ? null : `Comment of ${inlineCode(`@${t.decl.name}`)}: hosts show it as progress when the step runs.`;
      break;
  }
  if (value === null) return null;
  return { contents: { kind: 'markdown', value }, range: doc.positions.range(t.range) };
}
