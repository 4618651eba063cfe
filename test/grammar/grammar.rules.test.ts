// Targeted checks of the grammar against the spec's lexical rules (sections 1-2), so that a
// snapshot update cannot silently accept a wrong highlighting of what runs.
import { describe, expect, it } from 'vitest';
import { scopesOf, tokenize, type Token } from './tokenize';

const has = (scopes: readonly string[], prefix: string) => scopes.some((s) => s === prefix || s.startsWith(`${prefix}.`));
const commentTokens = (line: Token[]) => line.filter((t) => has(t.scopes, 'comment.line.number-sign'));

describe('declaration headers (1.5, 1.6, 2.1)', () => {
  it('scopes the name, the command, references, strings and bare literals', async () => {
    const lines = await tokenize('@sum add $a "two words" bare \'q\'');
    expect(scopesOf(lines, 0, 'sum')).toContain('entity.name.variable.declaration.lightsoplang');
    expect(scopesOf(lines, 0, 'add')).toContain('entity.name.function.command.lightsoplang');
    expect(scopesOf(lines, 0, 'a')).toContain('variable.other.reference.lightsoplang');
    expect(scopesOf(lines, 0, 'two words')).toContain('string.quoted.double.lightsoplang');
    expect(scopesOf(lines, 0, 'bare')).toContain('string.unquoted.argument.lightsoplang');
    expect(scopesOf(lines, 0, 'q')).toContain('string.quoted.single.lightsoplang');
  });

  it('never treats the command as a reference, nor "$a" or pre$a', async () => {
    const lines = await tokenize('@x $cmd "$a" pre$a');
    expect(scopesOf(lines, 0, '$cmd')).toContain('entity.name.function.command.lightsoplang');
    expect(scopesOf(lines, 0, '$a')).toContain('string.quoted.double.lightsoplang');
    expect(scopesOf(lines, 0, 'pre$a')).toContain('string.unquoted.argument.lightsoplang');
  });

  it('keeps quotes inside bare words as plain characters', async () => {
    const lines = await tokenize('@x emit abc"def x');
    expect(scopesOf(lines, 0, 'abc"def')).toContain('string.unquoted.argument.lightsoplang');
  });

  it('marks escapes and unterminated strings', async () => {
    const lines = await tokenize('@x emit "a\\tb" "open');
    expect(scopesOf(lines, 0, '\\t')).toContain('constant.character.escape.lightsoplang');
    expect(scopesOf(lines, 0, '"open')).toContain('invalid.illegal.unterminated-string.lightsoplang');
  });

  it('recognises a declaration after a zero-width run and indentation, but not after spaces then a zero-width space', async () => {
    const lines = await tokenize('\u200B  @a emit 1\n  \u200B@b emit 2');
    expect(scopesOf(lines, 0, 'a')).toContain('entity.name.variable.declaration.lightsoplang');
    expect(scopesOf(lines, 1, '  \u200B@b emit 2')).toContain('string.unquoted.multiline.lightsoplang');
  });
});

describe('the comment scan (1.4) and quirk Q1', () => {
  it('an apostrophe in a bare word hides a later # : `don\'t # comment here` has no comment', async () => {
    const lines = await tokenize("@x emit don't # comment here");
    expect(commentTokens(lines[0]!)).toEqual([]);
    expect(scopesOf(lines, 0, '#')).toContain('string.unquoted.argument.lightsoplang');
    expect(scopesOf(lines, 0, 'comment')).toContain('string.unquoted.argument.lightsoplang');
  });

  it('a # needs no whitespace before it, a quoted # is text and an escaped # is no comment', async () => {
    const lines = await tokenize('@x emit a#b c\n@y emit "v#h" # note\n@z emit a\\#b');
    expect(commentTokens(lines[0]!).map((t) => t.text).join('')).toBe('#b c');
    expect(scopesOf(lines, 0, 'a')).toContain('string.unquoted.argument.lightsoplang');
    expect(commentTokens(lines[1]!).map((t) => t.text).join('')).toBe('# note');
    expect(scopesOf(lines, 1, 'v#h')).toContain('string.quoted.double.lightsoplang');
    expect(commentTokens(lines[2]!)).toEqual([]);
  });

  it('comment lines before and between declarations are comments', async () => {
    const lines = await tokenize('# top\n@a emit 1\n# above b\n@b emit 2');
    expect(commentTokens(lines[0]!).length).toBeGreaterThan(0);
    expect(commentTokens(lines[2]!).length).toBeGreaterThan(0);
  });
});

describe('multi-line text (2.3) and here-docs (2.5)', () => {
  it('continuation lines are one literal, with no references', async () => {
    const lines = await tokenize('@p emit\nUse $not_a_reference.\n@n emit $p');
    expect(scopesOf(lines, 1, 'Use $not_a_reference.')).toContain('string.unquoted.multiline.lightsoplang');
    expect(scopesOf(lines, 2, 'p')).toContain('variable.other.reference.lightsoplang');
  });

  it('an assign here-doc has begin and end markers and a verbatim body', async () => {
    const lines = await tokenize('@l assign\n\n--begin-A B--\n# Dear $name\n--end-A--\n--end-A B--\nafter\n@m emit 1');
    expect(scopesOf(lines, 2, '--begin-A B--')).toContain('keyword.control.heredoc.begin.lightsoplang');
    expect(scopesOf(lines, 3, '# Dear $name')).toContain('string.unquoted.heredoc.lightsoplang');
    expect(scopesOf(lines, 4, '--end-A--')).toContain('string.unquoted.heredoc.lightsoplang');
    expect(scopesOf(lines, 5, '--end-A B--')).toContain('keyword.control.heredoc.end.lightsoplang');
    expect(scopesOf(lines, 6, 'after')).toContain('invalid.illegal.heredoc-trailing-content.lightsoplang');
    expect(scopesOf(lines, 7, 'm')).toContain('entity.name.variable.declaration.lightsoplang');
  });

  it('a declaration line ends an unterminated here-doc', async () => {
    const lines = await tokenize('@l assign\n--begin-A--\nbody\n@m emit 1');
    expect(scopesOf(lines, 2, 'body')).toContain('string.unquoted.heredoc.lightsoplang');
    expect(scopesOf(lines, 3, 'm')).toContain('entity.name.variable.declaration.lightsoplang');
  });

  it('markers are plain text when the header has arguments or the first line is not a begin marker', async () => {
    const lines = await tokenize('@x assign foo\n--begin-T--\n@y assign\ntext\n--begin-T--');
    expect(scopesOf(lines, 1, '--begin-T--')).toContain('string.unquoted.multiline.lightsoplang');
    expect(scopesOf(lines, 4, '--begin-T--')).toContain('string.unquoted.multiline.lightsoplang');
  });
});

describe('#!english (2.6) and the preamble (2.2)', () => {
  it('#!english at the start, after blank lines, makes the rest instructions', async () => {
    const lines = await tokenize('\n  \n #!english\n@x emit 1');
    expect(scopesOf(lines, 2, '#!english')).toContain('keyword.control.directive.english.lightsoplang');
    expect(scopesOf(lines, 3, '@x emit 1')).toContain('meta.instructions.lightsoplang');
  });

  it('#!english after other text is a comment, and stray preamble text is marked', async () => {
    const lines = await tokenize('# c\n#!english\nstray\n@x emit 1');
    expect(commentTokens(lines[1]!).length).toBeGreaterThan(0);
    expect(scopesOf(lines, 2, 'stray')).toContain('invalid.illegal.expected-declaration.lightsoplang');
  });
});
