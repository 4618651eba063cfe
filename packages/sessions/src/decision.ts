/**
 * Reading a loop planner's reply (sessions.md 3.6): Markdown sections or a JSON object with the
 * fields tool, prompt, reason and finalAnswer. The agent is never asked for objects; stubs and
 * providers return text and this module turns it into one decision, or null when unusable.
 */
import { FINAL_ANSWER } from '@lightsop/core';


export interface PlannerDecision {
  tool: string;
  prompt: string;
  reason: string;
  routeReason?: 'pending_awaiting_input';
}

type Field = 'tool' | 'prompt' | 'reason' | 'finalAnswer';

const FIELD_NAMES: Record<string, Field> = {
  tool: 'tool',
  toolname: 'tool',
  prompt: 'prompt',
  promptname: 'prompt',
  reason: 'reason',
  finalanswer: 'finalAnswer',
};

/** Case-insensitive field lookup ignoring emphasis markers, spaces, underscores and hyphens. */
function fieldOf(label: string): Field | null {
  const key = label.replace(/[*_\s`-]/g, '').toLowerCase();
  return Object.prototype.hasOwnProperty.call(FIELD_NAMES, key) ? FIELD_NAMES[key]! : null;
}

const OUTER_FENCE = /^(`{3,}|~{3,})[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n([\s\S]*?)\n[ \t]*\1[ \t]*$/;

function decide(fields: Partial<Record<Field, string>>): PlannerDecision | null {
  const reason = fields.reason ?? '';
  if (fields.finalAnswer !== undefined) return { tool: FINAL_ANSWER, prompt: fields.finalAnswer, reason };
  if (fields.tool !== undefined && fields.tool.trim() !== '') return { tool: fields.tool.trim(), prompt: fields.prompt ?? '', reason };
  if (fields.prompt !== undefined) return { tool: FINAL_ANSWER, prompt: fields.prompt, reason };
  if (fields.reason !== undefined) return { tool: FINAL_ANSWER, prompt: fields.reason, reason };
  return null;
}

function fromJson(value: unknown): PlannerDecision | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const fields: Partial<Record<Field, string>> = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    const field = fieldOf(key);
    if (!field || v === undefined || v === null) continue;
    fields[field] = typeof v === 'string' ? v : JSON.stringify(v);
  }
  return decide(fields);
}

/** A line that starts a field: a heading, a `Label:` line, or a bold label. */
function fieldStart(line: string): { field: Field; rest: string } | null {
  const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
  if (heading) {
    const text = heading[1]!;
    const colon = text.indexOf(':');
    const label = colon >= 0 ? text.slice(0, colon) : text;
    const field = fieldOf(label);
    if (field) return { field, rest: colon >= 0 ? text.slice(colon + 1).trim() : '' };
    return null;
  }
  const bold = /^\s*\*\*([^*]+?)\*\*\s*:?\s*(.*)$/.exec(line);
  if (bold) {
    const label = bold[1]!.replace(/:\s*$/, '');
    const hadColon = /:\s*$/.test(bold[1]!) || /^\s*\*\*[^*]+?\*\*\s*:/.test(line);
    const field = fieldOf(label);
    if (field && hadColon) return { field, rest: bold[2]!.trim() };
  }
  const plain = /^\s*([A-Za-z_*`\- ]{1,40}?)\s*:(.*)$/.exec(line);
  if (plain) {
    const field = fieldOf(plain[1]!);
    if (field) return { field, rest: plain[2]!.trim() };
  }
  return null;
}

/**
 * Parses a planner reply into a decision. Returns null for unusable replies: empty, a JSON array
 * or string, a JSON object without any field, malformed JSON inside a json fence.
 */
export function parseDecision(reply: unknown): PlannerDecision | null {
  if (typeof reply !== 'string') return null;
  let text = reply.replace(/\r\n?/g, '\n');
  if (text.trim() === '') return null;
  text = text.trim();
  const fence = OUTER_FENCE.exec(text);
  if (fence) {
    const lang = fence[2]!.toLowerCase();
    if (lang === 'json') {
      try {
        return fromJson(JSON.parse(fence[3]!));
      } catch {
        return null;
      }
    }
    if (lang === '' || lang === 'markdown' || lang === 'md' || lang === 'text') text = fence[3]!.trim();
  }
  if (/^[[{"]/.test(text)) {
    let parsed: unknown;
    let ok = false;
    try {
      parsed = JSON.parse(text);
      ok = true;
    } catch {
      // Not JSON after all: read it as Markdown.
    }
    if (ok) return fromJson(parsed);
  }
  const fields: Partial<Record<Field, string>> = {};
  let current: Field | null = null;
  let buffer: string[] = [];
  let inFence = false;
  let fenceMarker = '';
  const flush = () => {
    if (current) fields[current] = buffer.join('\n').trim();
  };
  for (const line of text.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line);
    if (inFence) {
      buffer.push(line);
      if (marker && marker[1]!.startsWith(fenceMarker[0]!) && marker[1]!.length >= fenceMarker.length) inFence = false;
      continue;
    }
    if (marker) {
      inFence = true;
      fenceMarker = marker[1]!;
      buffer.push(line);
      continue;
    }
    const start = fieldStart(line);
    if (start) {
      flush();
      current = start.field;
      buffer = start.rest === '' ? [] : [start.rest];
      continue;
    }
    buffer.push(line);
  }
  flush();
  if (Object.keys(fields).length === 0) return { tool: FINAL_ANSWER, prompt: text, reason: '' };
  return decide(fields);
}
