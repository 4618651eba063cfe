/**
 * Where a plan's skills and language model come from: the `lightsop.*` settings override the
 * `lightsop.config.json` at the root of the plan's workspace folder (the file the language server
 * reads too, so completion and Run Plan see the same skills); a plan outside every folder uses
 * the nearest config above it, as `lightsop run` does. The API key is never a setting: it lives
 * in SecretStorage (see api-key.ts). In an untrusted workspace the LLM endpoint and model come
 * from user settings only, since the key is sent to that endpoint.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import { CONFIG_FILE } from '@lightsop/core';
import { readConfigFileSync } from './config-file';

export interface PlanSettings {
  /** Absolute path of the skills file, or null when none is configured. */
  readonly skillsPath: string | null;
  /** Where the skills path came from, for messages. */
  readonly skillsOrigin: string | null;
  readonly llm: { readonly baseUrl?: string; readonly model?: string };
  /** The config file used, if any. */
  readonly configFile: string | null;
  /** Problems of the config file (the language server also shows them on the file). */
  readonly configProblems: readonly string[];
  /** `lightsop.run.otel`: export OpenTelemetry traces of Run Plan (run/traces.ts). */
  readonly otel: boolean;
}

function findConfigUpwards(dir: string, stopAt: string | null): string | null {
  let current = path.resolve(dir);
  for (;;) {
    const candidate = path.join(current, CONFIG_FILE);
    if (existsSync(candidate)) return candidate;
    if (stopAt && path.resolve(current) === path.resolve(stopAt)) return null;
    const parent = path.dirname(current);
    if (parent === current) return null;
    current = parent;
  }
}

/** The settings that apply to the plan at `uri`. */
export function planSettings(uri: vscode.Uri): PlanSettings {
  const folder = vscode.workspace.getWorkspaceFolder(uri);
  const cfg = vscode.workspace.getConfiguration('lightsop', uri);
  const base = folder?.uri.fsPath ?? (uri.scheme === 'file' ? path.dirname(uri.fsPath) : null);

  let configFile: string | null = null;
  if (folder) {
    const atRoot = path.join(folder.uri.fsPath, CONFIG_FILE);
    configFile = existsSync(atRoot) ? atRoot : null;
  } else if (uri.scheme === 'file') {
    configFile = findConfigUpwards(path.dirname(uri.fsPath), null);
  }
  let fromConfig: { skills: string | null; llm: { baseUrl?: string; model?: string } } = { skills: null, llm: {} };
  const configProblems: string[] = [];
  if (configFile) {
    const read = readConfigFileSync(configFile);
    for (const p of read.problems) configProblems.push(p);
    if (read.config) fromConfig = { skills: read.config.skills, llm: { ...(read.config.llm ?? {}) } };
  }

  const skillsSetting = (cfg.get<string>('skills') ?? '').trim();
  let skillsPath: string | null = null;
  let skillsOrigin: string | null = null;
  if (skillsSetting) {
    skillsPath = base ? path.resolve(base, skillsSetting) : path.resolve(skillsSetting);
    skillsOrigin = 'the lightsop.skills setting';
  } else if (fromConfig.skills && configFile) {
    skillsPath = path.resolve(path.dirname(configFile), fromConfig.skills);
    skillsOrigin = configFile;
  }
  let baseUrl: string | undefined;
  let model: string | undefined;
  if (vscode.workspace.isTrusted) {
    baseUrl = (cfg.get<string>('llm.baseUrl') ?? '').trim() || fromConfig.llm.baseUrl;
    model = (cfg.get<string>('llm.model') ?? '').trim() || fromConfig.llm.model;
  } else {
    // The stored API key goes to this endpoint: an untrusted workspace must not choose it
    // (through .vscode/settings.json or lightsop.config.json). Only user settings count.
    baseUrl = (cfg.inspect<string>('llm.baseUrl')?.globalValue ?? '').trim() || undefined;
    model = (cfg.inspect<string>('llm.model')?.globalValue ?? '').trim() || undefined;
  }
  // Traces carry the plan's commands and reasons: an untrusted workspace cannot turn them on.
  const otel = vscode.workspace.isTrusted ? cfg.get<boolean>('run.otel') === true : cfg.inspect<boolean>('run.otel')?.globalValue === true;
  return { skillsPath, skillsOrigin, llm: { baseUrl, model }, configFile, configProblems, otel };
}
