/** The process surface commands use, so tests can run them in-process. */
export interface Io {
  readonly cwd: string;
  readonly isTTY: boolean;
  readonly color: boolean;
  readonly version: string;
  stdout(text: string): void;
  stderr(text: string): void;
}
