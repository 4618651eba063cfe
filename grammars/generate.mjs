#!/usr/bin/env node
// Generates lightsoplang.tmLanguage.json from readable regex fragments. The JSON is committed
// (VS Code and the extension read it); test/grammar checks that it matches this generator, so
// edit this file and run `node grammars/generate.mjs`, never the JSON by hand.
//
// The grammar follows spec sections 1-2 line by line:
//   - a line whose effective start (one leading zero-width run, then whitespace) is `@` starts a
//     declaration block, which runs until the next such line (2.2);
//   - the header's inline comment starts where the comment scan of 1.4 says, quirk Q1 included:
//     every quote toggles the scan, even inside a bare word, so `don't # x` has no comment;
//   - header tokens follow 1.5: quoted tokens only at a token start, escapes, `$` references only
//     in argument positions, bare words run to whitespace;
//   - continuation lines are one literal (2.3), an `assign` here-doc has begin/body/end (2.5), and
//     `#!english` as the first non-blank text makes the whole file instructions (2.6).
// TextMate sees one line at a time and cannot look ahead, so a `#` line inside a block is shown
// as a comment even when it is detached (and therefore text); see docs/extension.md.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// Whitespace is exactly JavaScript's \s (1.2), minus the line feed that vscode-textmate appends.
const WS_CHARS = String.raw`\t\x{0B}\f\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}`;
const WS = `[${WS_CHARS}]`;
const NWS = `[^${WS_CHARS}\\n]`;
// The zero-width run removed first from a line (1.3).
const ZW = String.raw`[\x{FEFF}\x{200B}-\x{200D}]`;
// A line whose effective start is `@`: the end of every block (2.2).
const NEXT_DECLARATION = `(?=^${ZW}*${WS}*@)`;

// The comment scan (1.4) as a regular expression over the code part: plain characters, an escape
// (a backslash protects the next character, also at the end of the line), or a quoted run that
// ends at the next unescaped quote of its kind or at the end of the line.
const SCAN_ITEM = String.raw`[^\\'"#\n]|\\.|\\$|'(?:[^\\'\n]|\\.|\\$)*(?:'|$)|"(?:[^\\"\n]|\\.|\\$)*(?:"|$)`;
const HEADER = `^(${ZW}*)(${WS}*)(@(?:${SCAN_ITEM})*)(?:(#)(.*))?$`;

// A here-doc header (2.5): `@name assign`, no arguments, an inline comment allowed. The name is
// one token whose quotes (if any) are balanced, so that the scan ends outside quotes.
const NAME_ITEM = String.raw`[^${WS_CHARS}\\'"#\n]|\\${NWS}|'(?:[^${WS_CHARS}\\'\n]|\\${NWS})*'|"(?:[^${WS_CHARS}\\"\n]|\\${NWS})*"`;
const HEREDOC_HEADER = `^(${ZW}*)(${WS}*)(@(?:${NAME_ITEM})*${WS}+(?:assign|"assign"|'assign')${WS}*)(?:(#)(.*))?$`;

const headerCaptures = {
  0: { name: 'meta.declaration.header.lightsoplang' },
  3: { name: 'meta.declaration.header.lightsoplang', patterns: [{ include: '#header-code' }] },
  4: { name: 'comment.line.number-sign.lightsoplang punctuation.definition.comment.lightsoplang' },
  5: { name: 'comment.line.number-sign.lightsoplang' },
};

// Tokens of a header's code part (1.5, 3.2). These patterns run on the captured code part only.
const DQ = String.raw`(")((?:[^\\"]|\\.)*)(")`;
const SQ = String.raw`(')((?:[^\\']|\\.)*)(')`;
const QUOTED_COMMAND = String.raw`"(?:[^\\"]|\\.)*"?|'(?:[^\\']|\\.)*'?`;

const grammar = {
  $schema: 'https://raw.githubusercontent.com/martinring/tmlanguage/master/tmlanguage.json',
  name: 'LightSOPLang',
  scopeName: 'source.lightsoplang',
  fileTypes: ['sop'],
  patterns: [
    { include: '#english-script' },
    { include: '#leading-blank-lines' },
    { include: '#comment-line' },
    { include: '#heredoc-block' },
    { include: '#declaration-block' },
    { include: '#stray-line' },
  ],
  repository: {
    'english-script': {
      comment: '2.6: the first non-blank text of the file is #!english (on the first line)',
      name: 'meta.english.lightsoplang',
      begin: `\\A(${WS}*)(#!english)(.*)$`,
      beginCaptures: {
        2: { name: 'keyword.control.directive.english.lightsoplang' },
        3: { name: 'meta.instructions.lightsoplang' },
      },
      end: '(?!)',
      contentName: 'meta.instructions.lightsoplang',
    },
    'leading-blank-lines': {
      comment: '2.6: blank lines at the start of the file may come before #!english',
      begin: `\\A(?=${WS}*$)`,
      end: `^(?=${WS}*(?!#!english)${NWS})`,
      patterns: [
        {
          name: 'meta.english.lightsoplang',
          begin: `^(${WS}*)(#!english)(.*)$`,
          beginCaptures: {
            2: { name: 'keyword.control.directive.english.lightsoplang' },
            3: { name: 'meta.instructions.lightsoplang' },
          },
          end: '(?!)',
          contentName: 'meta.instructions.lightsoplang',
        },
      ],
    },
    'comment-line': {
      comment: '1.4: a comment line; before the first declaration, or attached to the next one',
      match: `^(${ZW}*)(${WS}*)(#)(.*)$`,
      name: 'comment.line.number-sign.lightsoplang',
      captures: { 3: { name: 'punctuation.definition.comment.lightsoplang' } },
    },
    'stray-line': {
      comment: '2.2: text before the first declaration is expected-declaration',
      match: `^.*${NWS}.*$`,
      name: 'invalid.illegal.expected-declaration.lightsoplang',
    },
    'declaration-block': {
      comment: '2.1-2.3: a header and its continuation lines, up to the next declaration line',
      name: 'meta.declaration.lightsoplang',
      begin: HEADER,
      beginCaptures: headerCaptures,
      end: NEXT_DECLARATION,
      patterns: [{ include: '#continuation' }],
    },
    'heredoc-block': {
      comment: '2.5: `@name assign` with no arguments; a here-doc when its first non-blank line is a begin marker',
      name: 'meta.declaration.lightsoplang',
      begin: HEREDOC_HEADER,
      beginCaptures: headerCaptures,
      end: NEXT_DECLARATION,
      patterns: [
        {
          comment: 'starts at the first non-blank continuation line, which is \\G here',
          begin: `^(?=${WS}*${NWS})`,
          end: NEXT_DECLARATION,
          patterns: [
            {
              name: 'meta.heredoc.lightsoplang',
              begin: `\\G(${WS}*)(--begin-(.+)--)(${WS}*)$`,
              beginCaptures: { 2: { name: 'keyword.control.heredoc.begin.lightsoplang' } },
              end: `^(${WS}*)(--end-\\3--)(${WS}*)$|${NEXT_DECLARATION}`,
              endCaptures: { 2: { name: 'keyword.control.heredoc.end.lightsoplang' } },
              contentName: 'string.unquoted.heredoc.lightsoplang',
            },
            {
              comment: 'no begin marker: ordinary multi-line text',
              begin: '\\G',
              end: NEXT_DECLARATION,
              patterns: [{ include: '#continuation' }],
            },
            { include: '#continuation-comment' },
            {
              comment: 'anything after the end marker (2.5 heredoc-trailing-content)',
              match: `^.*${NWS}.*$`,
              name: 'invalid.illegal.heredoc-trailing-content.lightsoplang',
            },
          ],
        },
      ],
    },
    continuation: {
      patterns: [{ include: '#continuation-comment' }, { include: '#continuation-text' }],
    },
    'continuation-comment': {
      comment: 'a # line in a block: the comment of the next declaration when attached to it, else text (2.4)',
      match: `^(${ZW}*)(${WS}*)(#)(.*)$`,
      name: 'comment.line.number-sign.lightsoplang',
      captures: { 3: { name: 'punctuation.definition.comment.lightsoplang' } },
    },
    'continuation-text': {
      comment: '2.3: continuation lines are one literal; no references, no escapes',
      match: `^.*${NWS}.*$`,
      name: 'string.unquoted.multiline.lightsoplang',
    },
    'header-code': {
      patterns: [
        {
          comment: 'the @name token, then the command (never a reference), then the arguments',
          begin: `(@)(${NWS}*)(?:(${WS}+)(?:(assign)(?!${NWS})|(${QUOTED_COMMAND}|[^${WS_CHARS}'"\\n]${NWS}*)))?`,
          beginCaptures: {
            1: { name: 'entity.name.variable.declaration.lightsoplang punctuation.definition.variable.lightsoplang' },
            2: { name: 'entity.name.variable.declaration.lightsoplang' },
            4: { name: 'support.function.builtin.lightsoplang' },
            5: { name: 'entity.name.function.command.lightsoplang', patterns: [{ include: '#quoted-string' }] },
          },
          end: '$',
          patterns: [{ include: '#argument' }],
        },
      ],
    },
    argument: {
      patterns: [
        {
          comment: '1.6: an unquoted token that starts with $ is a reference; the rest of the token is the name',
          match: `(\\$)(${NWS}*)`,
          name: 'variable.other.reference.lightsoplang',
          captures: { 1: { name: 'punctuation.definition.variable.lightsoplang' } },
        },
        { include: '#quoted-string' },
        {
          comment: '1.5: a bare token runs to whitespace; quotes inside it are plain characters',
          match: `[^${WS_CHARS}'"\\n]${NWS}*`,
          name: 'string.unquoted.argument.lightsoplang',
        },
      ],
    },
    'quoted-string': {
      patterns: [
        {
          match: DQ,
          name: 'string.quoted.double.lightsoplang',
          captures: {
            1: { name: 'punctuation.definition.string.begin.lightsoplang' },
            2: { patterns: [{ include: '#escape' }] },
            3: { name: 'punctuation.definition.string.end.lightsoplang' },
          },
        },
        {
          match: SQ,
          name: 'string.quoted.single.lightsoplang',
          captures: {
            1: { name: 'punctuation.definition.string.begin.lightsoplang' },
            2: { patterns: [{ include: '#escape' }] },
            3: { name: 'punctuation.definition.string.end.lightsoplang' },
          },
        },
        {
          comment: '1.5: no closing quote before the end of the code part (unterminated-string)',
          match: String.raw`["'].*$`,
          name: 'invalid.illegal.unterminated-string.lightsoplang',
        },
      ],
    },
    escape: {
      patterns: [
        {
          comment: '1.5: \\n \\r \\t \\\\ \\\' \\" and \\X (X itself)',
          match: String.raw`\\.`,
          name: 'constant.character.escape.lightsoplang',
        },
      ],
    },
  },
};

const here = path.dirname(fileURLToPath(import.meta.url));
export const GRAMMAR_JSON = JSON.stringify(grammar, null, 2) + '\n';

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeFileSync(path.join(here, 'lightsoplang.tmLanguage.json'), GRAMMAR_JSON);
  console.log('wrote grammars/lightsoplang.tmLanguage.json');
}
