import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { createTestApp, as } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { lazyRequestLogger } from '../../src/http/request-logger.js';

/** A stream that keeps the lines written to it in `lines`. */
function lineCollector(lines: string[]): Writable {
  return new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
}

/** docs/spec-gaps.md, "Conventions" logs: JSON lines (pino) with a request id; credentials never written. */
const lines: string[] = [];
const stream = lineCollector(lines);

const h = useTestApp({ logStream: stream });
const s = h.seeded;

test('no credential appears in any log line, and every request line has its request id', async () => {
  const from = lines.length;
  const secrets = [s.owner.session, s.apiToken, s.admin.session];
  assert.equal((await h.app.inject({ method: 'GET', url: '/v1/me', headers: as(s.owner.session) })).statusCode, 200);
  assert.equal((await h.app.inject({ method: 'GET', url: '/v1/api_tokens', headers: as(s.apiToken) })).statusCode, 200);
  const created = await h.app.inject({
    method: 'POST',
    url: '/v1/api_tokens',
    headers: as(s.admin.session, s.workspaceId, { 'idempotency-key': 'log-test', 'x-request-id': 'log-test-request' }),
    payload: { name: 'logged' },
  });
  assert.equal(created.statusCode, 201);
  const plaintext: string = created.json().token;
  secrets.push(plaintext);
  // The same again: a replay.
  await h.app.inject({ method: 'POST', url: '/v1/api_tokens', headers: as(s.admin.session, s.workspaceId, { 'idempotency-key': 'log-test' }), payload: { name: 'logged' } });
  // Failures: a wrong-checksum copy of a real token, an unknown session, a malformed body, a 404.
  await h.app.inject({ method: 'GET', url: '/v1/me', headers: as(`${plaintext.slice(0, -1)}x`) });
  await h.app.inject({ method: 'GET', url: '/v1/me', headers: as(`${s.member.session.slice(0, -1)}Q`) });
  await h.app.inject({ method: 'POST', url: '/v1/api_tokens', headers: { ...as(plaintext), 'content-type': 'application/json' }, payload: `{"name": "${plaintext}"` });
  await h.app.inject({ method: 'DELETE', url: '/v1/api_tokens/tok_00000000000000000000000000', headers: as(s.owner.session, s.workspaceId) });
  await h.app.inject({ method: 'GET', url: `/nowhere?token=x`, headers: as(s.owner.session) });

  const mine = lines.slice(from);
  assert.ok(mine.length >= 9, `expected a line per request, got ${mine.length}`);
  for (const line of mine) {
    const entry = JSON.parse(line) as Record<string, unknown>;
    assert.equal(typeof entry.level, 'number');
    assert.equal(typeof entry.time, 'number');
    assert.match(String(entry.reqId), /^[A-Za-z0-9._-]{1,64}$/, `no request id: ${line}`);
    for (const secret of secrets) {
      assert.ok(!line.includes(secret), `a credential in the log: ${line}`);
      assert.ok(!line.includes(secret.replace(/^sk_svc_/, '').slice(0, 24)), `part of a credential in the log: ${line}`);
    }
  }
  const requests = mine.map((l) => JSON.parse(l)).filter((e) => e.msg === 'request');
  assert.ok(requests.length >= 9);
  for (const r of requests) {
    assert.equal(typeof r.method, 'string');
    assert.equal(typeof r.status, 'number');
    assert.equal(typeof r.ms, 'number');
    assert.equal(r.level, 30, 'info');
    assert.equal(typeof r.pid, 'number', 'the same base fields as every other line');
  }
  assert.ok(
    requests.some((r) => r.route === '/v1/api_tokens' && r.method === 'POST'),
    'the route is its pattern',
  );
  assert.ok(
    requests.some((r) => r.reqId === 'log-test-request' && r.status === 201),
    'the client-given request id is used',
  );
  assert.equal(new Set(requests.map((r) => r.reqId)).size, requests.length, 'one id per request');
});

test('an internal error is logged with its request id, without the credential', async () => {
  const errLines: string[] = [];
  const errStream = lineCollector(errLines);
  const broken = await createTestApp({ logStream: errStream });
  const bs = await broken.seed();
  await broken.database.db.destroy();
  try {
    const res = await broken.app.inject({ method: 'GET', url: '/v1/me', headers: as(bs.owner.session) });
    assert.equal(res.statusCode, 500);
    const entries = errLines.map((l) => JSON.parse(l));
    const failure = entries.find((e) => e.level >= 50);
    assert.ok(failure, 'the 500 is logged as an error');
    assert.equal(failure.reqId, res.headers['x-request-id']);
    for (const l of errLines) assert.ok(!l.includes(bs.owner.session));
  } finally {
    await broken.app.close();
  }
});

test('the logger redacts Authorization, cookies, bodies, tokens and secret data wherever a caller logs them', async () => {
  const from = lines.length;
  h.app.log.info(
    {
      req: { headers: { authorization: `Bearer ${s.apiToken}`, cookie: 'sid=secret-cookie' }, body: { data: 'c2VjcmV0LXBheWxvYWQ=' } },
      res: { body: { token: s.apiToken } },
      created: { token: s.apiToken, data: 'c2VjcmV0LXBheWxvYWQ=', password: 'hunter2' },
    },
    'redaction probe',
  );
  const line = lines.slice(from).find((l) => l.includes('redaction probe'));
  assert.ok(line, 'the probe was logged');
  for (const secret of [s.apiToken, 'secret-cookie', 'c2VjcmV0LXBheWxvYWQ=', 'hunter2']) assert.ok(!line.includes(secret), `${secret} in ${line}`);
  assert.ok(line.includes('[redacted]'));
});

test("the request lines follow the server's level: at warn, a request writes none, and a warning still is written", async () => {
  const quiet: string[] = [];
  const quietStream = lineCollector(quiet);
  const warnApp = await createTestApp({ logStream: quietStream, config: { logLevel: 'warn' } });
  try {
    const ws = await warnApp.seed();
    assert.equal((await warnApp.app.inject({ method: 'GET', url: '/v1/me', headers: as(ws.owner.session) })).statusCode, 200);
    warnApp.app.log.warn('a warning');
    await new Promise((r) => setImmediate(r));
    const entries = quiet.map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      entries.filter((e) => e.msg === 'request'),
      [],
    );
    assert.ok(
      entries.some((e) => e.msg === 'a warning'),
      'the stream is written at warn',
    );
  } finally {
    await warnApp.close();
  }
});

test("a request's logger is made on its first line, once, with the request id bound and the route's level", () => {
  const written: string[] = [];
  const base = pino({ level: 'info' }, lineCollector(written));
  const children: unknown[] = [];
  // The real logger, but for a child() that also counts.
  const parent: FastifyBaseLogger = Object.assign(Object.create(base) as FastifyBaseLogger, {
    child(bindings: pino.Bindings, options?: pino.ChildLoggerOptions) {
      children.push(bindings);
      return base.child(bindings, options);
    },
  });

  const quiet = lazyRequestLogger(parent, { reqId: 'never-written' }, {});
  assert.equal(quiet.level, 'info', "the parent's level, read without making the child");
  assert.deepEqual(children, [], 'no child for a request that writes nothing');

  const log = lazyRequestLogger(parent, { reqId: 'req-1' }, { level: 'warn' });
  assert.equal(log.level, 'warn');
  log.info('below the level');
  log.warn('first');
  log.error('second');
  assert.deepEqual(children, [{ reqId: 'req-1' }], 'one child, made on the first call');
  const entries = written.map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(
    entries.map((e) => [e.reqId, e.msg]),
    [
      ['req-1', 'first'],
      ['req-1', 'second'],
    ],
  );
  log.level = 'info';
  log.info('now written');
  assert.equal(JSON.parse(written.at(-1)!).msg, 'now written', 'a level set on the request logger applies to it');
});
