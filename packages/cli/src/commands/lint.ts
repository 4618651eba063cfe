/** `lightsop lint`: check plans for CI and editors (contract.md). */
import path from 'node:path';
import { analyzePlan, CommandSurface } from '@lightsop/core';
import { findConfig } from '../config';
import { CliError } from '../errors';
import { expandConfigGlobs, expandPaths, expandFolder, readPlanFile, stripBom, type InputFile } from '../files';
import { formatGithub } from '../formats/github';
import { formatJson } from '../formats/json';
import { formatSarif } from '../formats/sarif';
import { formatText } from '../formats/text';
import { countSeverities, type FileReport } from '../formats/types';
import { mcpToolsFor } from '../mcp';
import { loadSkills, skillsPathFor } from '../skills';
import type { Io } from '../io';

export interface LintOptions {
  readonly skills?: string;
  readonly format: 'text' | 'json' | 'sarif' | 'github';
  readonly maxWarnings?: number;
  readonly quiet?: boolean;
}

const USAGE = 2;

/**
 * Which files `lint` or `fmt` work on: the arguments, else the config's `plans`, else every
 * `*.sop` here. Finding none is an error (exit 2) that says how to pass them to `command`.
 */
export function resolvePlanFiles(paths: readonly string[], cwd: string, command: 'lint' | 'fmt'): InputFile[] {
  if (paths.length > 0) return expandPaths(paths, cwd, USAGE);
  const config = findConfig(cwd);
  if (config?.plans) {
    const files = expandConfigGlobs(config.plans, config.dir, cwd);
    if (files.length === 0) throw new CliError(`no plan files match "plans" in ${config.file}`, USAGE);
    return files;
  }
  const files = expandFolder(cwd, cwd);
  if (files.length === 0) {
    throw new CliError(`no plans (*.sop) found here; pass the plans to ${command === 'lint' ? 'check' : 'format'}: lightsop ${command} PATHS...`, USAGE);
  }
  return files;
}

export async function lintCommand(paths: readonly string[], options: LintOptions, io: Io): Promise<number> {
  const files = resolvePlanFiles(paths, io.cwd, 'lint');
  const reports: FileReport[] = [];
  let unreadable = 0;
  for (const file of files) {
    // A file that cannot be read (or is not UTF-8) is reported on its own line; the rest are
    // still checked, and the exit code says an I/O error happened.
    let source: string;
    try {
      source = readPlanFile(file, USAGE);
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      io.stderr(`lightsop: ${error.message}\n`);
      unreadable++;
      continue;
    }
    const { text } = stripBom(source);
    const dir = file.absolute ? path.dirname(file.absolute) : io.cwd;
    const skillsPath = skillsPathFor(options.skills, dir, io.cwd);
    const skillsCommands = skillsPath ? (await loadSkills(skillsPath, USAGE, io.cwd)).commands : null;
    // MCP tools are commands too: with servers configured, the surface is the skills' and the tools'.
    const tools = await mcpToolsFor(dir, USAGE);
    const commands = !tools || tools.connections.length === 0
      ? skillsCommands
      : new CommandSurface([skillsCommands?.commands ?? [], tools.commands((n) => skillsCommands?.has(n) ?? false)]);
    let diagnostics = analyzePlan(text, { commands, inputDeclared: true }).diagnostics;
    if (options.quiet) diagnostics = diagnostics.filter((d) => d.severity === 'error');
    reports.push({ file: file.display, source: text, diagnostics });
  }
  const totals = countSeverities(reports);
  switch (options.format) {
    case 'json':
      io.stdout(formatJson(reports));
      break;
    case 'sarif':
      io.stdout(formatSarif(reports, { cwd: io.cwd, version: io.version }));
      break;
    case 'github':
      io.stdout(formatGithub(reports));
      break;
    default:
      io.stdout(formatText(reports, { frames: io.isTTY, color: io.color }, totals));
  }
  if (unreadable > 0) return USAGE;
  if (totals.errors > 0) return 1;
  if (options.maxWarnings !== undefined && totals.warnings > options.maxWarnings) {
    if (options.format === 'text') io.stderr(`lightsop: too many warnings (${totals.warnings}); the maximum is ${options.maxWarnings}\n`);
    return 1;
  }
  return 0;
}
