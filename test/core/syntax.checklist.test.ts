// Spec section 10, items 1-37: lines, whitespace, tokens, names, declarations, comments.
import { describe, expect, it } from 'vitest';
import { parsePlan } from '@lightsop/core';
import { argTexts, decl, decls, errors } from '../helpers/plan';

describe('lines, whitespace, tokens', () => {
  it('1: a lone CR is ordinary whitespace, not a line break', () => {
    const d = decls('@a emit x\r@b emit y');
    expect([...d.keys()]).toEqual(['a']);
    expect(argTexts(d.get('a')!)).toEqual(['x', '@b', 'emit', 'y']);
  });
  it('2: CRLF gives the same declarations and line numbers as LF', () => {
    const lf = parsePlan('# c\n@a emit x\n\n@b emit $a\ntext\n').plan.declarations;
    const crlf = parsePlan('# c\r\n@a emit x\r\n\r\n@b emit $a\r\ntext\r\n').plan.declarations;
    expect(crlf.map((d) => [d.name, d.lineNumber, argTexts(d), d.commentLines])).toEqual(lf.map((d) => [d.name, d.lineNumber, argTexts(d), d.commentLines]));
  });
  it('3: zero-width characters and a BOM before @ are ignored', () => {
    expect([...decls('\u200B\u200C\u200D@x emit 1').keys()]).toEqual(['x']);
    expect([...decls('\uFEFF@x emit 1').keys()]).toEqual(['x']);
  });
  it('4: zero-width after spaces makes a text line', () => {
    const d = decls('@a emit 0\n  \u200B@x emit 1');
    expect([...d.keys()]).toEqual(['a']);
    expect(argTexts(d.get('a')!)).toEqual(['0', '  \u200B@x emit 1']);
  });
  it('1.3: a zero-width-only line is blank in the preamble but content in continuation text', () => {
    expect(errors('\u200B\n@a emit x')).toEqual([]);
    expect(argTexts(decl('@a emit x\n\u200B\n', 'a'))).toEqual(['x', '\u200B']);
  });
  it('5: a no-break space separates tokens; a zero-width space does not', () => {
    expect(argTexts(decl('@a emit x\u00A0y', 'a'))).toEqual(['x', 'y']);
    expect(argTexts(decl('@a emit x\u200By', 'a'))).toEqual(['x\u200By']);
  });
  it('6: escapes in quoted strings', () => {
    expect(argTexts(decl(String.raw`@a emit "a\qb" "c\\d" "e\nf" 'g\"h'`, 'a'))).toEqual(['aqb', 'c\\d', 'e\nf', 'g"h']);
  });
  it('7: there are no numeric escapes', () => {
    expect(argTexts(decl(String.raw`@a emit "\u0041"`, 'a'))).toEqual(['u0041']);
  });
  it('8: a quoted string ending in a backslash is invalid-escape, also with spaces after it', () => {
    expect(errors('@x emit "abc\\')).toContain('invalid-escape@1');
    expect(errors('@x emit "abc\\   ')).toContain('invalid-escape@1');
  });
  it('9: an escaped final quote leaves the string unterminated', () => {
    expect(errors('@x emit "abc\\"')).toContain('unterminated-string@1');
  });
  it('10: a closing quote ends the token', () => {
    expect(argTexts(decl('@a emit "abc"def', 'a'))).toEqual(['abc', 'def']);
    const a = decl('@a emit "pre"$b\n@b emit x', 'a');
    expect(a.arguments.map((x) => x.kind)).toEqual(['literal', 'reference']);
  });
  it('11: an empty quoted string is an empty argument', () => {
    expect(argTexts(decl('@a emit "" \'\'', 'a'))).toEqual(['', '']);
  });
  it('12: bare tokens keep backslashes and quotes', () => {
    expect(argTexts(decl('@a emit a\\b abc"def', 'a'))).toEqual(['a\\b', 'abc"def']);
  });
  it('13: an inline comment needs no space before #', () => {
    const a = decl('@x emit a#b c', 'x');
    expect(argTexts(a)).toEqual(['a']);
    expect(a.commentLines).toEqual(['b c']);
  });
  it('14: # inside quotes is text', () => {
    expect(argTexts(decl('@x emit "value#hash" # c', 'x'))).toEqual(['value#hash']);
    expect(argTexts(decl("@y emit '#tag' # c", 'y'))).toEqual(['#tag']);
    expect(decl("@y emit '#tag' # c", 'y').comment).toBe('c');
  });
  it('15: a backslash protects # from the comment scan', () => {
    const x = decl('@x emit a\\#b', 'x');
    expect(argTexts(x)).toEqual(['a\\#b']);
    expect(x.commentLines).toEqual([]);
  });
  it('16 (Q1): an apostrophe in a bare word hides a later #', () => {
    const x = decl("@x emit don't # comment here", 'x');
    expect(argTexts(x)).toEqual(["don't", '#', 'comment', 'here']);
    expect(x.commentLines).toEqual([]);
  });
});

describe('names and references', () => {
  it('17: names may contain punctuation', () => {
    const x = decl('@a.b-c/d emit 1\n@x emit $a.b-c/d', 'x');
    expect(x.dependencies).toEqual(['a.b-c/d']);
    expect(errors('@a.b-c/d emit 1\n@x emit $a.b-c/d')).toEqual([]);
  });
  it('18: trailing punctuation is part of the referenced name', () => {
    expect(errors('@a emit 1\n@x emit $a,')).toEqual(['undefined-variable@2']);
    expect(decl('@a emit 1\n@x emit $a,', 'x').dependencies).toEqual(['a,']);
  });
  it('19: a lone $ refers to the empty name', () => {
    expect(errors('@x emit $')).toEqual(['undefined-variable@1']);
  });
  it('20: quoted $ and $ inside words or continuation text are literals', () => {
    const x = decl('@x emit "$a" \'$a\' pre$a\n$a in text', 'x');
    expect(x.arguments.every((a) => a.kind === 'literal')).toBe(true);
    expect(argTexts(x)).toEqual(['$a', '$a', 'pre$a', '$a in text']);
  });
  it('21: the command is never a reference; @word after the command is literal', () => {
    expect(decl('@x $cmd arg', 'x').command?.name).toBe('$cmd');
    expect(decl('@x $cmd arg', 'x').dependencies).toEqual([]);
    expect(argTexts(decl('@x emit @john', 'x'))).toEqual(['@john']);
  });
});

describe('declarations, continuation, comments', () => {
  it('22: missing-variable-name', () => {
    expect(errors('@ emit 1')).toEqual(['missing-variable-name@1']);
    expect(errors('@#foo')).toEqual(['missing-variable-name@1']);
  });
  it('23: missing-command', () => {
    expect(errors('@x')).toEqual(['missing-command@1']);
    expect(errors('@x # hi')).toEqual(['missing-command@1']);
    expect(errors('@x "" a')).toEqual(['missing-command@1']);
  });
  it('24: a quoted command may contain spaces', () => {
    expect(decl('@x "my cmd" a', 'x').command?.name).toBe('my cmd');
  });
  it('25: a text line before the first declaration is expected-declaration', () => {
    expect(errors('\n# ok\n\nhello\n@a emit x')).toEqual(['expected-declaration@4']);
    expect(errors('# c\n\n@a emit x')).toEqual([]);
  });
  it('26: indented declaration lines are declarations', () => {
    expect([...decls('    @x emit 1').keys()]).toEqual(['x']);
  });
  it('27: continuation lines become one argument, blank edges dropped, indentation kept', () => {
    expect(argTexts(decl('@p emit\n\nline one  \n  indented\n\n', 'p'))).toEqual(['line one  \n  indented']);
  });
  it('28: continuation text follows the header arguments', () => {
    expect(argTexts(decl('@x emit a b\ntext line', 'x'))).toEqual(['a', 'b', 'text line']);
  });
  it('29: a # line between text lines stays text', () => {
    expect(argTexts(decl('@p emit\nfirst\n# kept\nlast', 'p'))).toEqual(['first\n# kept\nlast']);
  });
  it('30: an indented @ line inside text starts a declaration', () => {
    const d = decls('@p emit\ntext\n  @john hi');
    expect([...d.keys()]).toEqual(['p', 'john']);
    expect(argTexts(d.get('p')!)).toEqual(['text']);
  });
  it('31: comment lines then the inline comment', () => {
    const d = decl('# Load input context\n# before calling the skill\n@context emit value # inline detail', 'context');
    expect(d.commentLines).toEqual(['Load input context', 'before calling the skill', 'inline detail']);
    expect(d.comment).toBe('Load input context\nbefore calling the skill\ninline detail');
  });
  it('32: a blank line detaches a comment, which becomes text of the previous block', () => {
    const src = '# Load\n@context emit value # inline detail\n\n# detached comment\n\n@next emit ok';
    expect(argTexts(decl(src, 'context'))).toEqual(['value', '# detached comment']);
    expect(decl(src, 'next').commentLines).toEqual([]);
  });
  it('33: a # line directly above the next declaration is not text of the previous one', () => {
    const src = '@a emit\ntext\n# about b\n@b emit y';
    expect(argTexts(decl(src, 'a'))).toEqual(['text']);
    expect(decl(src, 'b').commentLines).toEqual(['about b']);
  });
  it('34: a comment before the first declaration attaches, also after a BOM', () => {
    expect(decl('# first\n@a emit x', 'a').commentLines).toEqual(['first']);
    expect(decl('\uFEFF# first\n@a emit x', 'a').commentLines).toEqual(['first']);
  });
  it('35: ## and bare # comment lines', () => {
    expect(decl('## heading\n#\n# after\n@a emit x', 'a').commentLines).toEqual(['# heading', '', 'after']);
  });
  it('36: a # line at the end of the file is text of the last declaration', () => {
    expect(argTexts(decl('@a emit x\n# trailing', 'a'))).toEqual(['x', '# trailing']);
  });
  it('37: declarations know their line, comment and comment lines', () => {
    const d = decl('# Describe the step\n#   second comment line\n@info payload alpha # inline note\n', 'info');
    expect(d.lineNumber).toBe(3);
    expect(d.commentLines).toEqual(['Describe the step', 'second comment line', 'inline note']);
  });
});
