// Skills for the example plans: a plain skills map ({ name: { description, run } }).
// Everything here works offline, so `npm run examples` runs without a network or an LLM.
// `sideEffects: false` tells agent sessions (lightsop chat, the VS Code chat panel) that a
// command only reads or computes, so it runs without asking for approval.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const sentences = (text) => text.replace(/\s+/g, ' ').match(/[^.!?]+[.!?]+/g) ?? [text];

export default {
  read_file: {
    description: 'Reads a text file under examples/: read_file PATH',
    sideEffects: false,
    async run([file]) {
      const full = path.resolve(here, String(file));
      if (!full.startsWith(here + path.sep)) throw new Error(`${file} is outside the examples folder`);
      return readFile(full, 'utf8');
    },
  },
  summarize: {
    description: 'Keeps the first sentences of a text: summarize TEXT [COUNT]',
    sideEffects: false,
    run([text, count = '2']) {
      return sentences(String(text)).slice(0, Number(count) || 2).map((s) => s.trim()).join(' ');
    },
  },
  word_count: {
    description: 'Counts the words of a text',
    sideEffects: false,
    run([text]) {
      return String(String(text).split(/\s+/).filter(Boolean).length);
    },
  },
  greet: {
    description: 'Returns a greeting for a name',
    sideEffects: false,
    run([name]) {
      return `Hello, ${name}!`;
    },
  },
  upper: {
    description: 'Upper-cases its arguments',
    sideEffects: false,
    run(args) {
      return args.join(' ').toUpperCase();
    },
  },
  format_report: {
    description: 'Joins its arguments into a short report, one per paragraph',
    sideEffects: false,
    run(args) {
      return args.map(String).join('\n\n');
    },
  },
  final_answer: {
    description: 'The answer of the plan: final_answer VALUE',
    sideEffects: false,
    run([value]) {
      return value;
    },
  },
};
