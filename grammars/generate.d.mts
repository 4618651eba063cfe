/** The grammar as the JSON text that generate.mjs writes to lightsoplang.tmLanguage.json. */
export declare const GRAMMAR_JSON: string;
