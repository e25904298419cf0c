import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { once } from 'node:events';
import { lineDestination, loggerOptions, requestLineLogger, requestLineWriter, type RequestLine } from '../../src/log.js';

/** A stream that keeps what is written to it, write by write. */
function collector(into: string[]): Writable {
  return new Writable({
    write(chunk, _enc, done) {
      into.push(String(chunk));
      done();
    },
  });
}

const sameTime = (line: string) => line.replace(/"time":\d+/, '"time":0');

const LINES: RequestLine[] = [
  { reqId: 'req_01m8mn1w3j0nzx3wr17db81tqh', method: 'GET', route: '/v1/dashboards/:id/revisions', status: 200, ms: 0.9 },
  { reqId: 'client.given-id_1', method: 'POST', route: undefined, status: 404, ms: 12 },
  { reqId: 'r"q\\é', method: 'DELETE', route: '/v1/a "quoted" ☃ route', status: 500, ms: Number.NaN },
];

test("the request line written by hand is pino's own line, byte for byte but the time", () => {
  const byHand: string[] = [];
  const byPino: string[] = [];
  const write = requestLineWriter(loggerOptions('info', collector(byHand)))!;
  const logger = requestLineLogger(loggerOptions('info', collector(byPino)))!;
  for (const line of LINES) {
    write(line);
    logger.info(line, 'request');
  }
  assert.equal(byHand.length, LINES.length);
  assert.deepEqual(byHand.map(sameTime), byPino.map(sameTime));
  for (const line of byHand) assert.doesNotThrow(() => JSON.parse(line));
});

test('the request line follows the level, and options that change a line leave it to pino', () => {
  const quiet: string[] = [];
  requestLineWriter(loggerOptions('warn', collector(quiet)))!(LINES[0]!);
  assert.deepEqual(quiet, []);
  const untimed: string[] = [];
  requestLineWriter({ ...loggerOptions('info', collector(untimed)), timestamp: false })!(LINES[0]!);
  assert.equal(untimed.length, 1);
  assert.doesNotMatch(untimed[0]!, /"time"/);
  assert.equal(requestLineWriter(undefined), undefined);
});

test('the log destination keeps lines as bytes and writes them whole, in order, multibyte text included', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-log-lines-'));
  try {
    const file = path.join(dir, 'out.log');
    const dest = lineDestination(file) as ReturnType<typeof lineDestination> & { end(): void } & NodeJS.EventEmitter;
    await once(dest, 'ready');
    const written: string[] = [];
    for (let i = 0; i < 500; i++) {
      const line = `{"n":${i},"text":"é☃${'x'.repeat(i % 97)}😀"}\n`;
      written.push(line);
      dest.write(line);
    }
    // Ended as the process ends it: the writes in flight finish first (flushSync during an
    // asynchronous write would put the rest before it, in either of SonicBoom's modes).
    const closed = once(dest, 'close');
    dest.end();
    await closed;
    assert.equal(fs.readFileSync(file, 'utf8'), written.join(''));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
