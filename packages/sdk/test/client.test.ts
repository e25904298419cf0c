/**
 * The client's own behaviour, against a local HTTP server that answers as the API does for the
 * few paths used here (the SDK has no server dependency; the platform's suite runs this README's
 * examples against the real server).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, ifMatch, OperationFailedError, unwrap, WspError, type Dashboard, type DataOf, type ItemOf } from '../src/index.js';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

let seen: Seen[] = [];
let answers: ((req: Seen) => { status: number; body?: unknown; headers?: Record<string, string> })[] = [];
let server: http.Server;
let baseUrl: string;

before(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const s = { method: req.method ?? '', url: req.url ?? '', headers: req.headers };
      seen.push(s);
      const answer = answers.shift()?.(s) ?? { status: 500, body: { success: false, errors: [{ code: 7099, message: 'unexpected request' }], result: {} } };
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

const reset = (...a: typeof answers) => {
  seen = [];
  answers = a;
};
const noWait = async () => {};
const envelope = (code: number, message: string, extra: object = {}) => ({ success: false, errors: [{ code, message, ...extra }], result: {} });

test('credentials and Service-Context go on every request; a baseUrl with /v1 is the same server', async () => {
  for (const root of [baseUrl, `${baseUrl}/`, `${baseUrl}/v1`, `${baseUrl}/v1/`]) {
    reset(() => ({ status: 200, body: { data: [], has_more: false, next_cursor: null } }));
    const wsp = createClient({ baseUrl: root, token: 'sk_svc_x', workspace: 'ws_1' });
    await wsp.GET('/v1/secrets');
    assert.equal(seen[0]!.url, '/v1/secrets', root);
    assert.equal(seen[0]!.headers.authorization, 'Bearer sk_svc_x');
    assert.equal(seen[0]!.headers['service-context'], 'ws_1');
  }
});

test('a POST gets an Idempotency-Key, the same on its retry; a key of your own is kept; off when asked', async () => {
  reset(
    () => ({ status: 503, body: envelope(7054, 'database away'), headers: { 'retry-after': '1' } }),
    () => ({ status: 201, body: { id: 'sec_1' } }),
  );
  const slept: number[] = [];
  const wsp = createClient({ baseUrl, sleep: async (ms) => void slept.push(ms) });
  const created = await wsp.POST('/v1/secrets', { body: { name: 'db', data: 'eA==' } as never });
  assert.equal(created.response.status, 201);
  assert.equal(seen.length, 2);
  assert.match(String(seen[0]!.headers['idempotency-key']), /^[0-9a-f-]{36}$/);
  assert.equal(seen[1]!.headers['idempotency-key'], seen[0]!.headers['idempotency-key']);
  assert.deepEqual(slept, [1000], 'Retry-After is honoured');

  reset(() => ({ status: 201, body: {} }));
  await wsp.POST('/v1/secrets', { body: {} as never, headers: { 'idempotency-key': 'mine' } });
  assert.equal(seen[0]!.headers['idempotency-key'], 'mine');

  reset(
    () => ({ status: 503, body: envelope(7054, 'away') }),
    () => ({ status: 201, body: {} }),
  );
  const plain = createClient({ baseUrl, idempotencyKeys: false, sleep: noWait });
  const once = await plain.POST('/v1/secrets', { body: {} as never });
  assert.equal(once.response.status, 503, 'a write without a key is never sent twice');
  assert.equal(seen.length, 1);
  assert.equal(seen[0]!.headers['idempotency-key'], undefined);
});

test('a 409 7031 (the first request with the key still running) is retried; other 409s are not', async () => {
  reset(
    () => ({ status: 409, body: envelope(7031, 'in progress') }),
    () => ({ status: 201, body: {} }),
  );
  const wsp = createClient({ baseUrl, sleep: noWait });
  assert.equal((await wsp.POST('/v1/secrets', { body: {} as never })).response.status, 201);
  reset(() => ({ status: 409, body: envelope(7030, 'etag differs', { metadata: { current_etag: '"e2"' } }) }));
  assert.equal((await wsp.POST('/v1/secrets', { body: {} as never })).response.status, 409);
  assert.equal(seen.length, 1);
});

test('retries stop after `retries`; a GET is retried after a network failure', async () => {
  reset(...Array.from({ length: 5 }, () => () => ({ status: 429, body: envelope(7007, 'slow down') })));
  const wsp = createClient({ baseUrl, retries: 1, sleep: noWait });
  assert.equal((await wsp.GET('/v1/secrets')).response.status, 429);
  assert.equal(seen.length, 2);

  let calls = 0;
  const flaky = createClient({
    baseUrl,
    sleep: noWait,
    fetch: async (r) => {
      if (calls++ === 0) throw new TypeError('fetch failed');
      return fetch(r);
    },
  });
  reset(() => ({ status: 200, body: { data: [], has_more: false, next_cursor: null } }));
  assert.equal((await flaky.GET('/v1/secrets')).response.status, 200);
  assert.equal(calls, 2);
});

test('paginate follows next_cursor to the end, keeping the query, and stops when the loop breaks', async () => {
  const page = (ids: string[], next: string | null) => () => ({ status: 200, body: { data: ids.map((id) => ({ id })), has_more: next !== null, next_cursor: next } });
  reset(page(['a', 'b'], 'c1'), page(['c'], 'c2'), page([], null));
  const wsp = createClient({ baseUrl });
  const ids: string[] = [];
  for await (const d of wsp.paginate('/v1/dashboards', { params: { query: { limit: 2 } } })) ids.push(d.id);
  assert.deepEqual(ids, ['a', 'b', 'c']);
  assert.deepEqual(
    seen.map((s) => s.url),
    ['/v1/dashboards?limit=2', '/v1/dashboards?limit=2&cursor=c1', '/v1/dashboards?limit=2&cursor=c2'],
  );

  reset(page(['a', 'b'], 'c1'), page(['c'], null));
  for await (const d of wsp.paginate('/v1/dashboards')) if (d.id === 'a') break;
  assert.equal(seen.length, 1, 'no page is asked for after the loop ends');

  reset(() => ({ status: 403, body: envelope(7025, 'scope missing', { metadata: { required_scope: 'dashboards:read' } }) }));
  await assert.rejects(
    async () => {
      for await (const _ of wsp.paginate('/v1/dashboards')) void _;
    },
    (err: unknown) => err instanceof WspError && err.status === 403 && err.code === 7025 && err.metadata.required_scope === 'dashboards:read',
  );
  // The item type is the resource's named schema.
  const typed: ItemOf<'/v1/dashboards'> extends Dashboard ? true : false = true;
  assert.ok(typed);
});

test('DataOf is what a call answers: the named schema where there is one, the inline shape where not', () => {
  const created: DataOf<'/v1/dashboards', 'post'> extends Dashboard ? true : false = true;
  const read: DataOf<'/v1/dashboards/{id}'> extends Dashboard ? true : false = true;
  const me: DataOf<'/v1/me'> extends { csrf_token?: string; role: 'owner' | 'admin' | 'member' | 'viewer' | null } ? true : false = true;
  assert.ok(created && read && me);
});

test('waitForOperation backs off until done; a failed operation throws with its code', async () => {
  const op =
    (done: boolean, error: object | null = null) =>
    () => ({ status: 200, body: { id: 'op_1', kind: 'machine.suspend', done, error, result: done && !error ? {} : null, created_at: 1, updated_at: 2 } });
  reset(op(false), op(false), op(false), op(true));
  const slept: number[] = [];
  const wsp = createClient({ baseUrl });
  const done = await wsp.waitForOperation({ operation_id: 'op_1' }, { sleep: async (ms) => void slept.push(ms), intervalMs: 100, maxIntervalMs: 300 });
  assert.equal(done.done, true);
  assert.deepEqual(slept, [100, 200, 300]);
  assert.equal(seen[0]!.url, '/v1/operations/op_1');

  reset(op(true, { code: 7410, message: 'provider refused' }));
  await assert.rejects(wsp.waitForOperation('op_1', { sleep: noWait }), (err: unknown) => err instanceof OperationFailedError && err.code === 7410);

  reset(...Array.from({ length: 3 }, () => op(false)));
  await assert.rejects(wsp.waitForOperation('op_1', { sleep: noWait, timeoutMs: 1, intervalMs: 10 }), /not done after/);
});

test('unwrap answers the data or throws a WspError with code, path and metadata; ifMatch reads the etag', async () => {
  reset(() => ({ status: 422, body: envelope(7001, 'name is required', { path: ['body', 'name'] }) }));
  const wsp = createClient({ baseUrl });
  const err = await unwrap(wsp.POST('/v1/secrets', { body: {} as never })).catch((e: unknown) => e);
  assert.ok(err instanceof WspError);
  assert.equal(err.status, 422);
  assert.equal(err.code, 7001);
  assert.deepEqual(err.path, ['body', 'name']);
  assert.match(err.message, /name is required \(body\.name\) \[7001\]/);

  reset(() => ({ status: 200, body: { data: [], has_more: false, next_cursor: null } }));
  assert.deepEqual(await unwrap(wsp.GET('/v1/secrets')), { data: [], has_more: false, next_cursor: null });
  assert.deepEqual(ifMatch({ etag: '"e1"' }), { 'if-match': '"e1"' });
  assert.deepEqual(ifMatch('"e2"'), { 'if-match': '"e2"' });
});
