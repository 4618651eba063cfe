/**
 * The analysis cache: each open plan is analysed at most once per (document version, skills)
 * pair, and every feature reads the result from here. A new version is analysed incrementally
 * from the latest analysed one (`incremental.ts`: only the blocks on changed lines are parsed
 * again). It also remembers the latest analysis of each document, which completion may use
 * while a newer version of a large plan has not been analysed yet. Which documents are plans is
 * decided here too.
 */
import type { Analysis } from '@lightsop/core';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { analyzeEdit, analyzeFull, declaredNames, type DeclaredNames, type PlanSnapshot } from './incremental';
import { PositionMap } from './to-lsp';
import type { SkillsContext } from './workspace';

/** One analysed version of a plan, with everything features need. */
export interface AnalyzedDocument {
  readonly uri: string;
  readonly version: number;
  readonly text: string;
  readonly analysis: Analysis;
  /** The declared names, read without materialising the plan's declarations (for completion). */
  readonly declared: DeclaredNames;
  readonly positions: PositionMap;
  readonly skills: SkillsContext;
  /** How long the analysis took (incremental or not), in milliseconds (drives the adaptive debounce). */
  readonly millis: number;
}

/** The language id of plans (contract.md). */
export const LANGUAGE_ID = 'lightsoplang';

/** Plans are documents with the language id `lightsoplang`, or any `.sop` file whatever the client calls it. */
export function isPlanDocument(doc: Pick<TextDocument, 'uri' | 'languageId'>): boolean {
  return doc.languageId === LANGUAGE_ID || /\.sop$/i.test(doc.uri);
}

export class AnalysisCache {
  private readonly entries = new Map<string, AnalyzedDocument>();
  /** What the next version of each document is analysed from. */
  private readonly snapshots = new Map<string, PlanSnapshot>();

  constructor(private readonly skillsFor: (uri: string) => SkillsContext) {}

  /** The analysis of the document's current version, computed now if it is not cached. */
  analyze(doc: TextDocument): AnalyzedDocument {
    const cached = this.entries.get(doc.uri);
    const skills = this.skillsFor(doc.uri);
    if (cached && cached.version === doc.version && cached.skills.key === skills.key) return cached;
    const text = doc.getText();
    const started = performance.now();
    const previous = this.snapshots.get(doc.uri);
    const options = { commands: skills.commands };
    const { analysis, snapshot } = previous ? analyzeEdit(previous, text, options) : analyzeFull(text, options);
    const millis = performance.now() - started;
    this.snapshots.set(doc.uri, snapshot);
    const entry: AnalyzedDocument = {
      uri: doc.uri,
      version: doc.version,
      text,
      analysis,
      declared: declaredNames(snapshot),
      positions: new PositionMap(text, analysis.lineIndex),
      skills,
      millis,
    };
    this.entries.set(doc.uri, entry);
    return entry;
  }

  /** True when the cached analysis matches the document's version and current skills. */
  isCurrent(doc: TextDocument): boolean {
    const cached = this.entries.get(doc.uri);
    return !!cached && cached.version === doc.version && cached.skills.key === this.skillsFor(doc.uri).key;
  }

  /** The latest analysis of a document, whatever its version. */
  latest(uri: string): AnalyzedDocument | undefined {
    return this.entries.get(uri);
  }

  delete(uri: string): void {
    this.entries.delete(uri);
    this.snapshots.delete(uri);
  }
}
