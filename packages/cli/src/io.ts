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

/** What a standard stream of the process can write to. */
export interface GuardedStream {
  write(text: string): void;
}

interface Guard {
  closed: boolean;
  failed: number | null;
  failureExit: number;
}

const guards = new Map<NodeJS.WriteStream, Guard>();

/**
 * Guards a standard stream of the process against a reader that goes away. When the reader
 * closes the pipe (EPIPE: `lightsop lint | head`), further output is dropped quietly and the
 * command still ends with its own exit code, as it would if the reader had read everything.
 * Any other write error (a full disk behind `>`) is one line on stderr, and the exit code becomes
 * `failureExit`. Either way there is no stack trace. Listeners are attached once per stream.
 */
export function guardStream(stream: NodeJS.WriteStream, name: string, failureExit: number, report: (line: string) => void): GuardedStream {
  let guard = guards.get(stream);
  if (!guard) {
    const g: Guard = { closed: false, failed: null, failureExit };
    guard = g;
    guards.set(stream, g);
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (g.closed) return;
      g.closed = true;
      if (error.code === 'EPIPE') return;
      g.failed = g.failureExit;
      process.exitCode = g.failed;
      report(`lightsop: cannot write to ${name} (${error.code ?? error.message})\n`);
    });
  }
  guard.failureExit = failureExit;
  const current = guard;
  return {
    write(text) {
      if (!current.closed) stream.write(text);
    },
  };
}

/** The exit code a failed write to a standard stream imposes, if one failed. */
export function outputFailureExit(): number | null {
  for (const guard of guards.values()) if (guard.failed !== null) return guard.failed;
  return null;
}
