import pino, { type LoggerOptions } from 'pino';

/** The server's and the worker's log settings: JSON lines on stdout (or `stream`), credentials and bodies redacted. */
export function loggerOptions(level: string, stream?: pino.DestinationStream): LoggerOptions & { stream: pino.DestinationStream } {
  return {
    level,
    // Asynchronous writes: a synchronous write per line blocked the event loop on every request.
    // Written by 4 KB or every 100 ms, whichever comes first: a write per line or two was a
    // thread pool round trip each, 10 µs of a request's 186 under load (docs/benchmarks.md,
    // round ten). pino flushes the buffer when the process exits.
    stream: stream ?? pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 100 }),
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'req.body', 'res.body', '*.token', '*.data', '*.password'],
      censor: '[redacted]',
    },
  };
}

/**
 * The logger of the line each request ends with: the server's stream and level, without the
 * redaction. That line holds no credential (the method, the route's pattern, the status and the
 * time), and pino runs its redactor on every field of a line when a path starts with a wildcard
 * ('*.token'): a clone and a stringify per field, a seventh of what a kept page's request allocated
 * (docs/benchmarks.md, round ten). Undefined when the app logs nothing.
 */
export function requestLineLogger(options: unknown): pino.Logger | undefined {
  if (typeof options !== 'object' || options === null) return undefined;
  const { redact: _redacted, ...rest } = options as LoggerOptions & { stream?: pino.DestinationStream };
  return loggerOf(rest);
}

/** A logger of these settings, on their stream (pino takes the stream apart from its options). */
export function loggerOf({ stream, ...options }: LoggerOptions & { stream?: pino.DestinationStream }): pino.Logger {
  return pino(options, stream ?? process.stdout);
}
