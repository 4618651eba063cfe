/**
 * `--format github`: GitHub Actions workflow commands, which show as annotations on the pull
 * request. Data and properties are escaped as the runner expects.
 */
import type { FileReport } from './types';

const LEVEL = { error: 'error', warning: 'warning', info: 'notice' } as const;

function escapeData(s: string): string {
  return s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

function escapeProperty(s: string): string {
  return escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

export function formatGithub(reports: readonly FileReport[]): string {
  const out: string[] = [];
  for (const r of reports) {
    for (const d of r.diagnostics) {
      const { line, column, endLine, endColumn } = d.range;
      const props = [
        `file=${escapeProperty(r.file)}`,
        `line=${line}`,
        `endLine=${endLine}`,
        `col=${column}`,
        `endColumn=${endColumn}`,
        `title=${escapeProperty(`lightsop(${d.code})`)}`,
      ];
      out.push(`::${LEVEL[d.severity]} ${props.join(',')}::${escapeData(d.message)}`);
    }
  }
  return out.length ? out.join('\n') + '\n' : '';
}
