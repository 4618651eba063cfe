/** The process surface commands use, so tests can run them in-process. */
export interface Io {
  readonly cwd: string;
  readonly isTTY: boolean;
  readonly color: boolean;
  readonly version: string;
  /** Terminal size, when stdout is a terminal. */
  readonly columns?: number;
  readonly rows?: number;
  stdout(text: string): void;
  stderr(text: string): void;
}
