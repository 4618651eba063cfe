// Spec section 10, items 38-45: the assign here-doc.
import { describe, expect, it } from 'vitest';
import { argTexts, decl, errors } from '../helpers/plan';

describe('here-doc', () => {
  it('38: a here-doc gives its body', () => {
    expect(argTexts(decl('@x assign\n--begin-T--\nhello\n--end-T--', 'x'))).toEqual(['hello']);
  });
  it('39: blank lines inside the body are kept, edges included', () => {
    expect(argTexts(decl('@x assign\n--begin-T--\n\n  hello  \n\n--end-T--', 'x'))).toEqual(['\n  hello  \n']);
  });
  it('40: markers may be indented and followed by spaces; the token is greedy', () => {
    expect(argTexts(decl('@x assign\n   --begin-a--b--   \nbody\n  --end-a--b--  ', 'x'))).toEqual(['body']);
  });
  it('41: an unterminated here-doc is reported on the header line plus one', () => {
    expect(errors('@a emit x\n\n@t assign\n--begin-DOC--\nbody\nmore body\n')).toEqual(['unterminated-heredoc@4']);
    expect(errors('@t assign\n\n--begin-DOC--\nbody')).toEqual(['unterminated-heredoc@2']);
  });
  it('42: text after the end marker is heredoc-trailing-content, a detached comment included', () => {
    expect(errors('@t assign\n--begin-D--\nx\n--end-D--\nmore')).toEqual(['heredoc-trailing-content@5']);
    expect(errors('@t assign\n--begin-D--\nx\n--end-D--\n\n# detached\n\n@n emit 1')).toEqual(['heredoc-trailing-content@5']);
  });
  it('43: an @ line inside the body ends the block', () => {
    expect(errors('@t assign\n--begin-D--\n@john please call\n--end-D--')).toContain('unterminated-heredoc@2');
  });
  it('44: markers are plain text when the here-doc conditions do not hold', () => {
    expect(argTexts(decl('@x assign foo\n--begin-T--\nbody\n--end-T--', 'x'))).toEqual(['foo', '--begin-T--\nbody\n--end-T--']);
    expect(argTexts(decl('@x emit\n--begin-T--\nbody\n--end-T--', 'x'))).toEqual(['--begin-T--\nbody\n--end-T--']);
    expect(argTexts(decl('@x assign\ntext\n--begin-T--\nbody\n--end-T--', 'x'))).toEqual(['text\n--begin-T--\nbody\n--end-T--']);
    expect(argTexts(decl('@x assign ""\n--begin-T--\nbody\n--end-T--', 'x'))).toEqual(['', '--begin-T--\nbody\n--end-T--']);
  });
  it('an empty here-doc gives the empty string', () => {
    expect(argTexts(decl('@x assign\n--begin-A--\n--end-A--', 'x'))).toEqual(['']);
  });
  it('the here-doc body keeps $name, quotes and # lines as text', () => {
    const x = decl('@letter assign\n--begin-LETTER--\n# Dear $name,\n\n  Thanks for "everything".\n--end-LETTER--', 'letter');
    expect(argTexts(x)).toEqual(['# Dear $name,\n\n  Thanks for "everything".']);
    expect(x.dependencies).toEqual([]);
  });
});
