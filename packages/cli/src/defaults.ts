/**
 * Defaults the option help of `main.ts` shows. They live apart from the commands, so that
 * building the program (every command's help) loads no command module (ARCHITECTURE.md, packages/cli).
 */

/** The default grace after the abort signal (README "Stopping a run"). */
export const DEFAULT_GRACE_MS = 2000;
