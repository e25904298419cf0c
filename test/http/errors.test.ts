import { test, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import { createTestApp, as, firstError, type TestApp } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';

/**
 * docs/spec-gaps.md, "Conventions" errors: every malformed request gets its 4xx in the envelope, never a 500, never a
 * stack trace or SQL; every response carries x-request-id; none carries x-powered-by.
 */
const h = useTestApp();
const s = h.seeded;

type Res = Awaited<ReturnType<TestApp['app']['inject']>>;
const LEAKS = /\bat [\w.<>]+ \(|\.(ts|js):\d+|node_modules|SQLITE_|sqlite|postgres|syntax error|relation "|select |insert into|update "|stack/i;

function expectEnvelope(res: Res, status: number, code: number, path?: string[]) {
  assert.equal(res.statusCode, status, res.body);
  const body = res.json();
  assert.deepEqual(Object.keys(body).sort(), ['errors', 'result', 'success'], res.body);
  assert.equal(body.success, false);
  assert.deepEqual(body.result, {});
  const e = firstError(body);
  assert.equal(e.code, code, res.body);
  if (path) assert.deepEqual(e.path, path);
  assert.equal(typeof e.message, 'string');
  expectClean(res);
}

function expectClean(res: Res) {
  assert.ok(!LEAKS.test(res.body), `leaks internals: ${res.body}`);
  assert.match(String(res.headers['x-request-id']), /^[A-Za-z0-9._-]{1,64}$/, 'x-request-id');
  assert.equal(res.headers['x-powered-by'], undefined);
}

const owner = () => as(s.owner.session, s.workspaceId);

describe('routing', () => {
  test('an unknown route is 404 (7000), with or without a credential', async () => {
    for (const url of ['/v1/nope', '/nope', '/v1', '/v1/', '/v1/api_tokens/x/y', '/v2/api_tokens', '/v1/workspaces/x/y']) {
      expectEnvelope(await h.app.inject({ method: 'GET', url, headers: owner() }), 404, 7000);
      expectEnvelope(await h.app.inject({ method: 'GET', url }), 404, 7000);
    }
  });

  test('a known path with another method is 405 (7001) with Allow', async () => {
    const cases: [string, string, string[]][] = [
      ['PUT', '/v1/api_tokens', ['GET', 'POST']],
      ['PATCH', '/v1/api_tokens', ['GET', 'POST']],
      ['GET', `/v1/api_tokens/${s.apiTokenId}`, ['DELETE']],
      ['PUT', '/v1/workspaces', ['GET', 'POST']],
      ['DELETE', `/v1/workspaces/${s.workspaceId}`, ['GET', 'PATCH']],
      ['GET', '/v1/sessions/current', ['DELETE']],
      ['POST', '/healthz', ['GET']],
    ];
    for (const [method, url, allowed] of cases) {
      const res = await h.app.inject({ method: method as 'GET', url, headers: owner() });
      expectEnvelope(res, 405, 7001);
      assert.deepEqual(String(res.headers.allow).split(/,\s*/).sort(), allowed, `${method} ${url}`);
    }
  });
});

describe('bodies', () => {
  const post = (payload: string | Buffer, contentType = 'application/json', headers = owner()) =>
    h.app.inject({ method: 'POST', url: '/v1/api_tokens', headers: { ...headers, 'content-type': contentType }, payload });

  test('a body over 1 MiB is 413 (7005); exactly 1 MiB is read (and then judged on its content)', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(1024 * 1024) });
    expectEnvelope(await post(big), 413, 7005);
    const exact = `{"name":"${'x'.repeat(1024 * 1024 - 11)}"}`;
    assert.equal(Buffer.byteLength(exact), 1024 * 1024);
    expectEnvelope(await post(exact), 422, 7003, ['body', 'name']);
  });

  test('malformed JSON is 422 (7004) on ["body"]', async () => {
    for (const bad of ['{', '{"name":', "{'name':'x'}", '{"name":"x",}', 'name=x', '\u0000', '{"name":"x"}}']) {
      expectEnvelope(await post(bad), 422, 7004, ['body']);
    }
  });

  test('an empty body that says JSON is no body (422 7003: this route needs one); a body of the wrong JSON type is 422 on ["body"]', async () => {
    const empty = await post('');
    expectEnvelope(empty, 422, 7003, ['body']);
    for (const wrong of ['null', '[]', '"name"', '5', 'true']) {
      const res = await post(wrong);
      assert.equal(res.statusCode, 422, `${wrong}: ${res.body}`);
      expectClean(res);
    }
  });

  test('__proto__ and constructor.prototype in a body are a 4xx, never a 500, and pollute nothing', async () => {
    for (const body of ['{"__proto__":{"polluted":true},"name":"x"}', '{"name":"x","constructor":{"prototype":{"polluted":true}}}', '{"name":{"__proto__":{"a":1}}}']) {
      const res = await post(body);
      expectEnvelope(res, 422, 7004);
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  test('a poisoned key and a syntax error have distinct, accurate messages (both 422 7004 on ["body"])', async () => {
    for (const body of ['{"__proto__":{"polluted":true},"name":"x"}', '{"name":"x","a":[{"__proto__":{}}]}', '{"\\u005f_proto__":{"polluted":true}}']) {
      const res = await post(body);
      expectEnvelope(res, 422, 7004, ['body']);
      const { message } = firstError(res.json());
      assert.match(message, /valid JSON but has a "__proto__" key, which is refused/, body);
    }
    const ctor = await post('{"name":"x","constructor":{"prototype":{"polluted":true}}}');
    expectEnvelope(ctor, 422, 7004, ['body']);
    assert.match(firstError(ctor.json()).message, /valid JSON but has a "constructor" key holding a "prototype"/);
    const syntax = await post('{"__proto__":');
    expectEnvelope(syntax, 422, 7004, ['body']);
    assert.match(firstError(syntax.json()).message, /^The request body is not valid JSON: /);
    // A key merely named constructor, holding no prototype, is an ordinary (here unexpected) property.
    const plain = await post('{"name":"x","constructor":"y"}');
    expectEnvelope(plain, 422, 7003, ['body', 'constructor']);
  });

  test('a content type other than JSON is 415 (7006)', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/jsonx']) {
      expectEnvelope(await post('name=x', type), 415, 7006);
    }
    // JSON with parameters is JSON.
    const ok = await post('{"name":"charset"}', 'application/json; charset=utf-8');
    assert.equal(ok.statusCode, 201);
  });

  test('an unexpected property and a wrong type are 422 with their own paths, one entry each', async () => {
    const res = await post(JSON.stringify({ name: 5, expires_at: 'soon', extra: 1 }));
    assert.equal(res.statusCode, 422);
    const paths = res
      .json()
      .errors.map((e: { path: string[] }) => e.path.join('.'))
      .sort();
    assert.deepEqual(paths, ['body.expires_at', 'body.extra', 'body.name']);
  });
});

describe('paths and queries', () => {
  test('a path id over its length is 422 on ["path","id"]; at the length it is 404 (7002)', async () => {
    expectEnvelope(await h.app.inject({ method: 'GET', url: `/v1/workspaces/ws_${'a'.repeat(51)}`, headers: owner() }), 422, 7003, ['path', 'id']);
    expectEnvelope(await h.app.inject({ method: 'GET', url: `/v1/workspaces/ws_${'a'.repeat(50)}`, headers: owner() }), 404, 7002);
    expectEnvelope(await h.app.inject({ method: 'DELETE', url: `/v1/api_tokens/tok_${'a'.repeat(61)}`, headers: owner() }), 422, 7003, ['path', 'id']);
    expectEnvelope(await h.app.inject({ method: 'DELETE', url: `/v1/api_tokens/tok_${'a'.repeat(60)}`, headers: owner() }), 404, 7002);
  });

  test('a path parameter far past any length, or bad percent-encoding, is 422, not 400 or 500', async () => {
    expectEnvelope(await h.app.inject({ method: 'GET', url: `/v1/workspaces/${'a'.repeat(600)}`, headers: owner() }), 422, 7003);
    for (const url of ['/v1/workspaces/%E0%A4%A', '/v1/workspaces/%', '/v1/workspaces/%zz']) {
      const res = await h.app.inject({ method: 'GET', url, headers: owner() });
      assert.ok([404, 422].includes(res.statusCode), `${url}: ${res.statusCode} ${res.body}`);
      expectClean(res);
    }
  });

  test('a bad query parameter is 422 on ["query", name]; an unknown one too', async () => {
    for (const [qs, name] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=1.5', 'limit'],
      ['cursor=', 'cursor'],
      ['cursor=a%20b', 'cursor'],
      ['bogus=1', 'bogus'],
    ] as const) {
      expectEnvelope(await h.app.inject({ method: 'GET', url: `/v1/api_tokens?${qs}`, headers: owner() }), 422, 7003, ['query', name]);
    }
  });
});

describe('headers of every response', () => {
  test('x-request-id on successes and on every kind of error; a well-formed client id is echoed, a bad one replaced', async () => {
    const responses = [
      await h.app.inject({ method: 'GET', url: '/v1/me', headers: owner() }),
      await h.app.inject({ method: 'GET', url: '/v1/me' }),
      await h.app.inject({ method: 'GET', url: '/v1/api_tokens', headers: as(s.owner.session) }),
      await h.app.inject({ method: 'GET', url: '/nope' }),
      await h.app.inject({ method: 'PUT', url: '/v1/api_tokens', headers: owner() }),
      await h.app.inject({ method: 'GET', url: '/healthz' }),
      await h.app.inject({ method: 'GET', url: `/v1/workspaces/${'a'.repeat(600)}`, headers: owner() }),
    ];
    const ids = new Set<string>();
    for (const r of responses) {
      expectClean(r);
      ids.add(String(r.headers['x-request-id']));
    }
    assert.equal(ids.size, responses.length, 'each request has its own id');
    const echoed = await h.app.inject({ method: 'GET', url: '/v1/me', headers: { ...owner(), 'x-request-id': 'client-id.42' } });
    assert.equal(echoed.headers['x-request-id'], 'client-id.42');
    const replaced = await h.app.inject({ method: 'GET', url: '/v1/me', headers: { ...owner(), 'x-request-id': 'bad id\twith "stuff"' } });
    assert.notEqual(replaced.headers['x-request-id'], 'bad id\twith "stuff"');
    expectClean(replaced);
  });

  test('API responses are not cached: Cache-Control no-store', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/v1/api_tokens', headers: owner() });
    assert.equal(res.headers['cache-control'], 'no-store');
  });
});

test('an internal failure (the database gone) is 500 (7099) in the envelope without details; /readyz is 503', async () => {
  const broken = await createTestApp();
  const bs = await broken.seed();
  await broken.database.db.destroy();
  try {
    const res = await broken.app.inject({ method: 'GET', url: '/v1/me', headers: as(bs.owner.session) });
    expectEnvelope(res, 500, 7099);
    const ready = await broken.app.inject({ method: 'GET', url: '/readyz' });
    expectEnvelope(ready, 503, 7098);
  } finally {
    await broken.app.close();
  }
});

describe('requests the HTTP parser refuses, over a real socket', () => {
  let port: number;
  before(async () => {
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    port = (h.app.server.address() as AddressInfo).port;
  });

  /** Writes raw bytes and reads until the server closes the connection. */
  function raw(request: string): Promise<{ status: number; headers: string; body: string }> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      let data = '';
      socket.setTimeout(10_000, () => reject(new Error(`no answer: ${data}`)));
      socket.on('data', (d) => (data += d.toString('latin1')));
      socket.on('error', () => undefined); // the server closes hard after answering
      socket.on('close', () => {
        const [head = '', body = ''] = data.split('\r\n\r\n');
        resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), headers: head, body });
      });
      socket.write(request, 'latin1');
    });
  }

  test('headers over 16 KiB: 431 (7008) in the envelope', async () => {
    const res = await raw(`GET /v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.owner.session}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    assert.equal(res.status, 431, res.headers);
    // The envelope, with a message that says what was wrong and what the limit is.
    assert.deepEqual(JSON.parse(res.body), { success: false, errors: [{ code: 7008, message: 'The request headers are larger than the server accepts (16 KiB)' }], result: {} });
  });

  test('a request that is not HTTP, or has a forbidden character in a header: 400 (7009) in the envelope', async () => {
    for (const bad of [
      'NOT HTTP AT ALL\r\n\r\n',
      `GET /v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\u0001b\r\n\r\n`,
      'GET /v1/me HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nabcdef',
    ]) {
      const res = await raw(bad);
      assert.equal(res.status, 400, `${JSON.stringify(bad)}: ${res.headers}`);
      const body = JSON.parse(res.body);
      assert.deepEqual(body, { success: false, errors: [{ code: 7009, message: 'The request is not valid HTTP' }], result: {} }, JSON.stringify(bad));
    }
  });

  test('a well-formed request on the same listener still works', async () => {
    const res = await raw(`GET /v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.owner.session}\r\nConnection: close\r\n\r\n`);
    assert.equal(res.status, 200);
  });
});

test('an encoded colon (%3A) never names a custom method: 404 7000, before credentials, whatever its decoded form would match', async () => {
  const made = await h.app.inject({ method: 'POST', url: '/v1/secrets', headers: as(s.apiToken), payload: { name: 'colon' } });
  assert.equal(made.statusCode, 201);
  for (const [method, url] of [
    ['POST', '/v1/installs/inst_01abc%3Arestore'],
    ['POST', '/v1/installs/inst_01abc%3arestore'],
    ['POST', '/v1/machines/mch_01abc%3Asuspend'],
    ['GET', `/v1/secrets/${made.json().id}%3Ax`],
  ] as const) {
    for (const headers of [as(s.apiToken, undefined, { 'if-match': '*', 'idempotency-key': `k-${url}` }), {}]) {
      const res = await h.app.inject({ method, url, headers, ...(method === 'POST' ? { payload: {} } : {}) });
      assert.equal(res.statusCode, 404, `${method} ${url}: ${res.body}`);
      assert.equal(firstError(res.json()).code, 7000);
      assert.match(firstError(res.json()).message, /encoded colon/);
    }
  }
  // In the query it is data as ever.
  assert.equal((await h.app.inject({ method: 'GET', url: '/v1/secrets?limit=5&x=%3A', headers: as(s.apiToken) })).statusCode, 422, 'an unknown query parameter, not a route error');
  // The literal colon still names the method.
  const literal = await h.app.inject({
    method: 'POST',
    url: '/v1/installs/inst_01abc:restore',
    headers: as(s.apiToken, undefined, { 'if-match': '*', 'idempotency-key': 'k-literal' }),
    payload: { render_id: 'rnd_01abc' },
  });
  assert.equal(literal.statusCode, 404);
  assert.equal(firstError(literal.json()).code, 7002, 'the restore route ran: the install does not exist');
});
