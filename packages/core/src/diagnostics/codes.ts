/**
 * The registry of stable diagnostic codes (contract.md). CLI help, SARIF rules, the language
 * server and the tests all read this table. Never rename or reuse a code; messages may change.
 */

export type Severity = 'error' | 'warning' | 'info';

export type DiagnosticCode =
  | 'expected-declaration'
  | 'missing-variable-name'
  | 'missing-command'
  | 'unterminated-string'
  | 'invalid-escape'
  | 'unterminated-heredoc'
  | 'heredoc-trailing-content'
  | 'duplicate-declaration'
  | 'undefined-variable'
  | 'cycle'
  | 'unknown-command'
  | 'argument-count'
  | 'unused-variable';

export type DiagnosticCategory = 'syntax' | 'topology' | 'skills' | 'advisory';

export interface CodeInfo {
  readonly code: DiagnosticCode;
  readonly category: DiagnosticCategory;
  /** Default severity; `unused-variable` is a warning for `assign` and info otherwise. */
  readonly severity: Severity;
  /** One-line summary, used for CLI help and SARIF rule descriptions. */
  readonly summary: string;
}

const table: readonly CodeInfo[] = [
  { code: 'expected-declaration', category: 'syntax', severity: 'error', summary: "Only blank lines and comments may come before the first '@' declaration." },
  { code: 'missing-variable-name', category: 'syntax', severity: 'error', summary: "A declaration needs a variable name right after '@'." },
  { code: 'missing-command', category: 'syntax', severity: 'error', summary: 'A declaration needs a command after its variable name.' },
  { code: 'unterminated-string', category: 'syntax', severity: 'error', summary: 'A quoted string is not closed before the end of its line.' },
  { code: 'invalid-escape', category: 'syntax', severity: 'error', summary: 'A backslash at the end of a line has nothing to escape.' },
  { code: 'unterminated-heredoc', category: 'syntax', severity: 'error', summary: "An 'assign' here-doc has no '--end-TOKEN--' line before the next declaration." },
  { code: 'heredoc-trailing-content', category: 'syntax', severity: 'error', summary: "Text follows the '--end-TOKEN--' line of an 'assign' here-doc." },
  { code: 'duplicate-declaration', category: 'topology', severity: 'error', summary: 'A variable is declared more than once.' },
  { code: 'undefined-variable', category: 'topology', severity: 'error', summary: 'A $reference names a variable that is not declared.' },
  { code: 'cycle', category: 'topology', severity: 'error', summary: 'Declarations depend on each other in a cycle, so none of them can run.' },
  { code: 'unknown-command', category: 'skills', severity: 'error', summary: 'A command is not in the skills description.' },
  { code: 'argument-count', category: 'skills', severity: 'error', summary: 'A command that says which arguments it takes (an MCP tool) is given too many, or not its required ones.' },
  { code: 'unused-variable', category: 'advisory', severity: 'warning', summary: 'A declared variable is never referenced (a warning for assign, info for other steps).' },
];

/** Every stable code with its metadata, in check order. */
export const DIAGNOSTIC_CODES: readonly CodeInfo[] = table;

const byCode = new Map(table.map((info) => [info.code, info]));

/** Metadata of one code. */
export function codeInfo(code: DiagnosticCode): CodeInfo {
  return byCode.get(code)!;
}

/** Syntax codes: a plan with any of them cannot run. */
export const SYNTAX_CODES: ReadonlySet<DiagnosticCode> = new Set(table.filter((c) => c.category === 'syntax').map((c) => c.code));
/** Topology codes: a plan with any of them cannot run. */
export const TOPOLOGY_CODES: ReadonlySet<DiagnosticCode> = new Set(table.filter((c) => c.category === 'topology').map((c) => c.code));
