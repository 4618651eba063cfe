/**
 * Signature help while typing a command's arguments: for a command whose provider lists its
 * parameters (an MCP tool's input schema, a skill's `parameters`), the usage line with the
 * parameter the cursor's argument maps to (arguments map onto parameters in order, docs/mcp.md).
 * The context comes from the current text of the cursor's line, like completion's.
 */
import { findInlineComment } from '@lightsop/core';
import type { SignatureHelp } from 'vscode-languageserver';
import type { CompletionInput } from './completion';
import { commandDocumentation, commandInfo } from './commands';

/** The header tokens of the cursor's line up to the cursor, and whether the cursor starts a new one. */
function tokensBefore(text: string, offset: number): { tokens: string[]; fresh: boolean } | null {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  const line = text.slice(lineStart, offset);
  const at = line.search(/\S/);
  if (at === -1 || line[at] !== '@') return null;
  if (findInlineComment(text, lineStart + at, offset) !== -1) return null;
  const tokens: string[] = [];
  let i = at;
  let fresh = true;
  while (i < line.length) {
    const c = line[i]!;
    if (/\s/.test(c)) {
      i++;
      fresh = true;
      continue;
    }
    let token = '';
    if ((c === '"' || c === "'") && tokens.length > 0) {
      let j = i + 1;
      while (j < line.length && line[j] !== c) j += line[j] === '\\' ? 2 : 1;
      token = line.slice(i + 1, Math.min(j, line.length));
      i = j + 1;
      // Inside an unclosed quote the cursor is still in this argument.
      fresh = false;
      if (j >= line.length) {
        tokens.push(token);
        return { tokens, fresh: false };
      }
    } else {
      let j = i;
      while (j < line.length && !/\s/.test(line[j]!)) j++;
      token = line.slice(i, j);
      i = j;
      fresh = false;
    }
    tokens.push(token);
  }
  return { tokens, fresh };
}

export function getSignatureHelp(input: CompletionInput, position: { line: number; character: number }): SignatureHelp | null {
  const offset = input.positions.offset(position);
  const scan = tokensBefore(input.text, offset);
  if (!scan || scan.tokens.length < 2) return null;
  // The cursor must be past the command: after its token and a space.
  if (scan.tokens.length === 2 && !scan.fresh) return null;
  const command = commandInfo(scan.tokens[1]!, input.skills);
  const params = command?.parameters ?? [];
  if (!command || params.length === 0) return null;
  const argIndex = scan.tokens.length - 2 - (scan.fresh ? 0 : 1);
  const labels = params.map((p) => (p.required === false ? `${p.name}?` : p.name));
  let label = command.name;
  const parameters: { label: [number, number]; documentation?: string }[] = [];
  for (let i = 0; i < labels.length; i++) {
    label += ' ';
    const start = label.length;
    label += labels[i]!;
    const description = params[i]!.description;
    parameters.push(description ? { label: [start, label.length], documentation: description } : { label: [start, label.length] });
  }
  const documentation = commandDocumentation(command);
  return {
    signatures: [{ label, parameters, ...(documentation ? { documentation: { kind: 'markdown', value: documentation } } : {}) }],
    activeSignature: 0,
    activeParameter: Math.min(argIndex, params.length),
  };
}
