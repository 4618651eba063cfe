/** Markdown files imported as text (the build's `.md` loader; vitest's markdown-as-text plugin). */
declare module '*.md' {
  const text: string;
  export default text;
}
