/**
 * A small Markdown reader for answers in the chat page: paragraphs, headings, fenced code,
 * lists, quotes, rules, and inline code, bold, italic and links. It produces a tree of plain
 * data that the page turns into DOM nodes with `textContent` and `createElement` only, so no
 * text from a model ever becomes HTML. Links keep only http(s) and mailto targets; anything else
 * stays text. A link never hides where it goes: a label that looks like a URL, a domain or an
 * address but names another place stays plain text and is followed by the real destination, and
 * the page shows every other link's destination after its label. Also used for plan
 * highlighting: `planTokens` splits a plan line into classes.
 */

export type Inline =
  | { readonly t: 'text'; readonly v: string }
  | { readonly t: 'code'; readonly v: string }
  | { readonly t: 'strong'; readonly c: readonly Inline[] }
  | { readonly t: 'em'; readonly c: readonly Inline[] }
  | { readonly t: 'link'; readonly href: string; readonly c: readonly Inline[] }
  | { readonly t: 'br' };

export type Block =
  | { readonly t: 'p'; readonly c: readonly Inline[] }
  | { readonly t: 'h'; readonly level: number; readonly c: readonly Inline[] }
  | { readonly t: 'code'; readonly lang: string; readonly v: string }
  | { readonly t: 'list'; readonly ordered: boolean; readonly start: number; readonly items: readonly (readonly Inline[])[] }
  | { readonly t: 'quote'; readonly c: readonly Block[] }
  | { readonly t: 'hr' };

const SAFE_HREF = /^(https?:\/\/|mailto:)[^\s<>"'`]+$/i;

/** True for link targets the page may render as links. */
export function safeHref(href: string): boolean {
  return SAFE_HREF.test(href.trim());
}

/** The text a reader sees for inline nodes. */
export function inlineText(nodes: readonly Inline[]): string {
  let out = '';
  for (const n of nodes) {
    if (n.t === 'text' || n.t === 'code') out += n.v;
    else if (n.t === 'br') out += '\n';
    else out += inlineText(n.c);
  }
  return out;
}

/**
 * A link's destination as the page shows it: the URL as the browser parses it, so an
 * internationalised host appears in its ASCII (punycode) form and a look-alike letter cannot pass
 * for the original; a target the parser refuses is shown as written.
 */
export function displayHref(href: string): string {
  const trimmed = href.trim();
  if (/^mailto:/i.test(trimmed)) return trimmed;
  try {
    return new URL(trimmed).href;
  } catch {
    return trimmed;
  }
}

/** True when the link's own text already is its destination, so the page need not repeat it. */
export function linkShowsDestination(link: Extract<Inline, { t: 'link' }>): boolean {
  const shown = inlineText(link.c).trim();
  return shown === link.href.trim() || shown === displayHref(link.href);
}

/** A label a reader would take for a destination: a URL with a scheme, a `www.` or domain-like name, or an address. */
function looksLikeDestination(label: string): boolean {
  const t = label.trim();
  return /^[a-z][a-z0-9+.-]*:/i.test(t) // a scheme: https:, mailto:, javascript:, ...
    || /^www\./i.test(t)
    || /^[^\s/@]+\.[a-z]{2,}(?::\d+)?(?:[/?#]\S*)?$/i.test(t) // example.com, example.com/login
    || /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(t); // someone@example.com
}

/** True when a destination-like label names the link's own target (scheme, case and a final slash aside). */
function namesTarget(label: string, href: string): boolean {
  const norm = (x: string) => x.trim().toLowerCase().replace(/\/+$/, '');
  const l = norm(label);
  const targets = [href, displayHref(href)].map(norm);
  for (const t of targets) {
    if (l === t || l === t.replace(/^https?:\/\//, '') || l === t.replace(/^mailto:/, '')) return true;
  }
  return false;
}

function pushText(out: Inline[], v: string): void {
  if (v === '') return;
  const last = out[out.length - 1];
  if (last && last.t === 'text') out[out.length - 1] = { t: 'text', v: last.v + v };
  else out.push({ t: 'text', v });
}

/** Inline markup of one paragraph's text. */
export function parseInline(text: string, depth = 0): Inline[] {
  const out: Inline[] = [];
  let i = 0;
  let plain = '';
  const flush = () => {
    pushText(out, plain);
    plain = '';
  };
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '\\' && i + 1 < text.length && /[\\`*_[\]()#+\-.!>~|]/.test(text[i + 1]!)) {
      plain += text[i + 1];
      i += 2;
      continue;
    }
    if (ch === '\n') {
      flush();
      out.push({ t: 'br' });
      i++;
      continue;
    }
    if (ch === '`') {
      let ticks = 1;
      while (text[i + ticks] === '`') ticks++;
      const fence = '`'.repeat(ticks);
      const end = text.indexOf(fence, i + ticks);
      if (end > i) {
        flush();
        let code = text.slice(i + ticks, end);
        if (code.startsWith(' ') && code.endsWith(' ') && code.trim() !== '') code = code.slice(1, -1);
        out.push({ t: 'code', v: code });
        i = end + ticks;
        continue;
      }
      plain += fence;
      i += ticks;
      continue;
    }
    if (depth < 4 && (ch === '*' || ch === '_')) {
      const double = text[i + 1] === ch;
      const marker = double ? ch + ch : ch;
      const start = i + marker.length;
      // An opening marker is followed by a non-space; `_` inside words is a plain character.
      const wordInside = ch === '_' && i > 0 && /\w/.test(text[i - 1]!);
      if (!wordInside && start < text.length && !/\s/.test(text[start]!)) {
        let end = text.indexOf(marker, start);
        const badClose = (at: number) => /\s/.test(text[at - 1]!) || (!double && text[at + 1] === ch) || (ch === '_' && /\w/.test(text[at + marker.length] ?? ''));
        while (end > start && badClose(end)) end = text.indexOf(marker, end + marker.length);
        if (end > start) {
          flush();
          const inner = parseInline(text.slice(start, end), depth + 1);
          out.push(double ? { t: 'strong', c: inner } : { t: 'em', c: inner });
          i = end + marker.length;
          continue;
        }
      }
      plain += ch;
      i++;
      continue;
    }
    if (ch === '[' && depth < 4) {
      const close = text.indexOf(']', i + 1);
      if (close > i && text[close + 1] === '(') {
        // The target ends at the parenthesis that balances the opening one.
        let end = -1;
        for (let j = close + 2, depthOfParens = 1; j < text.length; j++) {
          if (text[j] === '(') depthOfParens++;
          else if (text[j] === ')' && --depthOfParens === 0) {
            end = j;
            break;
          }
        }
        if (end > close) {
          const href = text.slice(close + 2, end).trim();
          const label = text.slice(i + 1, close);
          flush();
          const inner = parseInline(label, depth + 1);
          if (safeHref(href) && looksLikeDestination(inlineText(inner)) && !namesTarget(inlineText(inner), href)) {
            // `[https://bank.example](https://evil.example)`: the label stays text and the real
            // destination follows, as the link's own text.
            for (const n of inner) if (n.t === 'text') pushText(out, n.v); else out.push(n);
            pushText(out, ' (');
            out.push({ t: 'link', href, c: [{ t: 'text', v: displayHref(href) }] });
            pushText(out, ')');
          } else if (safeHref(href)) {
            out.push({ t: 'link', href, c: inner });
          } else {
            // A loop, not push(...inner): a long label must not become a call with that many arguments.
            for (const n of inner) if (n.t === 'text') pushText(out, n.v); else out.push(n);
          }
          i = end + 1;
          continue;
        }
      }
    }
    plain += ch;
    i++;
  }
  flush();
  return out;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)\s*$/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const BULLET = /^ {0,3}[-*+]\s+(.*)$/;
const ORDERED = /^ {0,3}(\d{1,9})[.)]\s+(.*)$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}>\s?(.*)$/;

/** Block structure of a Markdown text. */
export function parseMarkdown(text: string, depth = 0): Block[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const out: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.trim() === '') {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const marker = fence[1]!;
      const body: string[] = [];
      i++;
      const closes = (l: string) => {
        const t = l.trim();
        return t.length >= marker.length && [...t].every((c) => c === marker[0]);
      };
      while (i < lines.length && !closes(lines[i]!)) {
        body.push(lines[i]!);
        i++;
      }
      i++;
      out.push({ t: 'code', lang: fence[2] ?? '', v: body.join('\n') });
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      out.push({ t: 'h', level: heading[1]!.length, c: parseInline(heading[2]!) });
      i++;
      continue;
    }
    if (RULE.test(line)) {
      out.push({ t: 'hr' });
      i++;
      continue;
    }
    if (QUOTE.test(line) && depth < 4) {
      const body: string[] = [];
      while (i < lines.length && QUOTE.test(lines[i]!)) {
        body.push(QUOTE.exec(lines[i]!)![1]!);
        i++;
      }
      out.push({ t: 'quote', c: parseMarkdown(body.join('\n'), depth + 1) });
      continue;
    }
    const bullet = BULLET.exec(line);
    const ordered = ORDERED.exec(line);
    if (bullet || ordered) {
      const isOrdered = !bullet;
      const items: string[] = [];
      while (i < lines.length) {
        const l = lines[i]!;
        const m = isOrdered ? ORDERED.exec(l) : BULLET.exec(l);
        if (m) {
          items.push(isOrdered ? m[2]! : m[1]!);
          i++;
        } else if (l.trim() !== '' && /^\s{2,}/.test(l) && items.length > 0) {
          items[items.length - 1] += `\n${l.trim()}`;
          i++;
        } else break;
      }
      out.push({ t: 'list', ordered: isOrdered, start: ordered ? Number(ordered[1]) : 1, items: items.map((s) => parseInline(s)) });
      continue;
    }
    const para: string[] = [];
    while (i < lines.length) {
      const l = lines[i]!;
      if (l.trim() === '' || FENCE.test(l) || HEADING.test(l) || RULE.test(l) || QUOTE.test(l) || BULLET.test(l) || ORDERED.test(l)) break;
      para.push(l.trim());
      i++;
    }
    out.push({ t: 'p', c: parseInline(para.join('\n')) });
  }
  return out;
}

export type PlanTokenClass = 'name' | 'command' | 'ref' | 'string' | 'comment' | 'text' | 'plain';

/**
 * Splits one plan line for highlighting, close to the extension's grammar: a header line's `@name`,
 * command, `$` references, quoted strings and an inline ` #` comment outside quotes; a `#` line is a
 * comment; other lines (continuation text) are text.
 */
export function planTokens(line: string): { cls: PlanTokenClass; text: string }[] {
  const trimmed = line.replace(/^[\uFEFF\u200B-\u200D]+/, '').trimStart();
  if (trimmed.startsWith('#')) return [{ cls: 'comment', text: line }];
  if (!trimmed.startsWith('@')) return line === '' ? [] : [{ cls: 'text', text: line }];
  const out: { cls: PlanTokenClass; text: string }[] = [];
  const head = /^(\s*)(@[^\s]*)(\s*)([^\s#"']*)/.exec(line)!;
  if (head[1]) out.push({ cls: 'plain', text: head[1] });
  out.push({ cls: 'name', text: head[2]! });
  if (head[3]) out.push({ cls: 'plain', text: head[3] });
  if (head[4]) out.push({ cls: 'command', text: head[4] });
  let i = head[0].length;
  while (i < line.length) {
    const ch = line[i]!;
    if (ch === '"' || ch === "'") {
      let j = i + 1;
      while (j < line.length && line[j] !== ch) j += line[j] === '\\' ? 2 : 1;
      out.push({ cls: 'string', text: line.slice(i, Math.min(j + 1, line.length)) });
      i = j + 1;
    } else if (ch === '#' && (i === 0 || /\s/.test(line[i - 1]!))) {
      out.push({ cls: 'comment', text: line.slice(i) });
      break;
    } else if (ch === '$') {
      const m = /^\$[A-Za-z0-9_.-]*/.exec(line.slice(i))!;
      out.push({ cls: 'ref', text: m[0] });
      i += m[0].length;
    } else {
      const m = /^[^"'#$]+|^[#]/.exec(line.slice(i))!;
      const last = out[out.length - 1];
      if (last && last.cls === 'plain') out[out.length - 1] = { cls: 'plain', text: last.text + m[0] };
      else out.push({ cls: 'plain', text: m[0] });
      i += m[0].length;
    }
  }
  return out;
}
