/**
 * `--format sarif`: SARIF 2.1.0 as GitHub code scanning accepts it: one rule per stable code,
 * results located relative to %SRCROOT% (the working directory), UTF-16 columns, end exclusive.
 */
import type * as Sarif from 'sarif';
import { pathToFileURL } from 'node:url';
import { DIAGNOSTIC_CODES, type Severity } from '@lightsop/core';
import type { FileReport } from './types';

const LEVEL: Record<Severity, Sarif.Result.level> = { error: 'error', warning: 'warning', info: 'note' };

function ruleName(code: string): string {
  return code.replace(/(^|-)(\w)/g, (_, __, c: string) => c.toUpperCase());
}

function artifactUri(file: string): string {
  return file.split('/').map(encodeURIComponent).join('/');
}

export function buildSarif(reports: readonly FileReport[], options: { cwd: string; version: string }): Sarif.Log {
  const rules: Sarif.ReportingDescriptor[] = DIAGNOSTIC_CODES.map((c) => ({
    id: c.code,
    name: ruleName(c.code),
    shortDescription: { text: c.summary },
    fullDescription: { text: c.summary },
    help: { text: `${c.summary} See docs/diagnostics.md#${c.code} in the LightSOPLang toolchain.` },
    defaultConfiguration: { level: LEVEL[c.severity] },
    properties: { tags: [c.category] },
  }));
  const ruleIndex = new Map(rules.map((r, i) => [r.id, i]));
  const results: Sarif.Result[] = [];
  for (const r of reports) {
    for (const d of r.diagnostics) {
      const location = (message?: string, range = d.range): Sarif.Location => ({
        physicalLocation: {
          artifactLocation: r.file === '<stdin>' ? { uri: 'stdin' } : { uri: artifactUri(r.file), uriBaseId: '%SRCROOT%' },
          region: { startLine: range.line, startColumn: range.column, endLine: range.endLine, endColumn: range.endColumn },
        },
        ...(message ? { message: { text: message } } : {}),
      });
      results.push({
        ruleId: d.code,
        ruleIndex: ruleIndex.get(d.code)!,
        level: LEVEL[d.severity],
        message: { text: d.message },
        locations: [location()],
        ...(d.related?.length ? { relatedLocations: d.related.map((rel, i) => ({ id: i + 1, ...location(rel.message, rel.range) })) } : {}),
      });
    }
  }
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: { driver: { name: 'lightsop', semanticVersion: options.version, version: options.version, rules } },
        originalUriBaseIds: { '%SRCROOT%': { uri: pathToFileURL(options.cwd).href.replace(/\/?$/, '/') } },
        columnKind: 'utf16CodeUnits',
        results,
      },
    ],
  };
}

export function formatSarif(reports: readonly FileReport[], options: { cwd: string; version: string }): string {
  return JSON.stringify(buildSarif(reports, options), null, 2) + '\n';
}
