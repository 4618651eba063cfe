/**
 * @lightsop/core: the LightSOPLang parser, validator, formatter and diagnostics model.
 * No I/O and nothing from the editor: every host (CLI, runtime, language server) builds on it.
 */
export * from './ast';
export * from './text/source-range';
export { LineIndex, computeLineStarts } from './text/line-index';
export { isWhitespace, isZeroWidth } from './text/characters';
export * from './diagnostics/codes';
export * from './diagnostics/diagnostic';
export { parsePlan, isEnglishSource, type ParseResult } from './syntax/build-ast';
export { findInlineComment } from './syntax/lines';
export { SyntaxTree, SpanTable, TokenKind, DeclFlag, type TreeArrays } from './syntax/tree';
export { analyzePlan, type Analysis, type AnalyzeOptions } from './validate/index';
export { buildSymbols, dependentsOf, type Symbols } from './validate/symbols';
export { checkArgumentCount, isKnownCommand } from './validate/skills';
export { cyclicComponents, cyclePath, cycleMessage } from './validate/topology';
export * from './commands/surface';
export { suggest, editDistance } from './validate/suggest';
export { formatPlan, type FormatOptions } from './format/formatter';
export { buildPlanGraph, planGraphData, toDot, toMermaid, type GraphNode, type GraphEdge, type PlanGraph } from './graph/export';
export { parseSkillsJson, SkillsDescriptionError } from './skills/description';
export { signatureOf } from './signature';
export { parseConfigText, parseDurationMs, CONFIG_FILE, type ParsedConfig, type WorkspaceConfig, type ConfigProblem, type ConfigProblemCode, type OffsetSpan } from './config/parse-config';
export { readMcpServers, resolveMcpServer, MCP_SERVER_NAME, type McpServerEntry, type ResolvedMcpServer, type McpFieldProblem, type ResolveContext } from './config/mcp-servers';
export { redactSecrets, hasUrlCredentials } from './text/redact';
