import pino, { type LoggerOptions } from 'pino';

/** The server's and the worker's log settings: JSON lines on stdout, credentials and bodies redacted. */
export function loggerOptions(level: string): LoggerOptions & { stream: pino.DestinationStream } {
  return {
    level,
    // Asynchronous writes: a synchronous write per line blocked the event loop on every request.
    // pino flushes the buffer when the process exits.
    stream: pino.destination({ dest: 1, sync: false }),
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
  const { redact: _redacted, stream, ...rest } = options as LoggerOptions & { stream?: pino.DestinationStream };
  return pino(rest, stream ?? process.stdout);
}
