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
