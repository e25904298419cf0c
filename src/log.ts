import pino, { type LoggerOptions } from 'pino';

/** The server's and the worker's log settings: JSON lines on stdout (or `stream`), credentials and bodies redacted. */
export function loggerOptions(level: string, stream?: pino.DestinationStream): LoggerOptions & { stream: pino.DestinationStream } {
  return {
    level,
    // Asynchronous writes: a synchronous write per line blocked the event loop on every request.
    // Written by 4 KB or every 100 ms, whichever comes first: a write per line or two was a
    // thread pool round trip each, 10 µs of a request's 186 under load (docs/benchmarks.md,
    // round ten). pino flushes the buffer when the process exits.
    stream: stream ?? lineDestination(),
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'req.body', 'res.body', '*.token', '*.data', '*.password'],
      censor: '[redacted]',
    },
  };
}

/**
 * stdout, written asynchronously by 4 KB or every 100 ms. SonicBoom keeps its text lines by
 * appending them to one string and measures that whole string's UTF-8 length at every line,
 * which flattens it (a copy of up to 16 KB a line, and as much garbage): 5% of a cached read's
 * time under load (docs/benchmarks.md, round fourteen). Kept as bytes instead, each line is
 * encoded once and the lines are joined once, by the write that sends them.
 */
export function lineDestination(dest: number | string = 1): pino.DestinationStream {
  const stream = pino.destination({ dest, sync: false, minLength: 4096, periodicFlush: 100, contentMode: 'buffer' });
  const writeBytes = stream.write.bind(stream) as (data: string | Buffer) => boolean;
  stream.write = (line: string) => writeBytes(Buffer.from(line));
  return stream;
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

/** What the line each request ends with says. */
export interface RequestLine {
  reqId: string;
  method: string;
  route: string | undefined;
  status: number;
  ms: number;
}

/** The logger options under which a line is level, time, pid, hostname, its fields and msg (loggerOptions'). */
const PLAIN_LINE_OPTIONS = new Set(['level', 'stream', 'redact']);

/**
 * Writes the line each request ends with, as requestLineLogger's `info(line, 'request')` would
 * (its level, time, bindings and message, in pino's order): a fixed shape, so written without
 * pino's generic serializer (0.45 of its 2.3 µs a line: docs/benchmarks.md, round fourteen).
 * Undefined when the app logs nothing.
 */
export function requestLineWriter(options: unknown): ((line: RequestLine) => void) | undefined {
  const logger = requestLineLogger(options);
  if (!logger) return undefined;
  if (!logger.isLevelEnabled('info')) return () => {};
  // Options that change what a line holds (a timestamp, formatters, a mixin) leave it to pino.
  if (Object.keys(options as object).some((k) => !PLAIN_LINE_OPTIONS.has(k))) return (line) => logger.info(line, 'request');
  // eslint-disable-next-line no-restricted-syntax -- pino's stream and bindings, kept under its exported symbols, are not in its types
  const stream = (logger as unknown as Record<symbol, pino.DestinationStream>)[pino.symbols.streamSym]!;
  // eslint-disable-next-line no-restricted-syntax -- as above: pino.symbols.chindingsSym holds ',"pid":…,"hostname":…'
  const bindings = (logger as unknown as Record<symbol, string>)[pino.symbols.chindingsSym]!;
  const text = JSON.stringify;
  return ({ reqId, method, route, status, ms }) =>
    void stream.write(
      `{"level":30,"time":${Date.now()}${bindings},"reqId":${text(reqId)},"method":${text(method)}${route === undefined ? '' : `,"route":${text(route)}`},"status":${status},"ms":${Number.isFinite(ms) ? ms : null},"msg":"request"}\n`,
    );
}

/** A logger of these settings, on their stream (pino takes the stream apart from its options). */
export function loggerOf({ stream, ...options }: LoggerOptions & { stream?: pino.DestinationStream }): pino.Logger {
  return pino(options, stream ?? process.stdout);
}
