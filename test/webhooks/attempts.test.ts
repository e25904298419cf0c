import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { as, firstError } from '../helpers/harness.js';
import { useTestApp, type Schemas } from '../helpers/test-app.js';
import { startReceiver, type Answer } from './receiver.js';
import { RETRY_DELAYS_SECONDS } from '../../src/webhooks/delivery-job.js';
import { RESPONSE_BODY_BYTES, RESPONSE_HEADERS_MAX } from '../../src/webhooks/sender.js';
import { REQUEST_BODY_SHOWN_BYTES } from '../../src/webhooks/schemas.js';
import { webhookStore } from '../../src/webhooks/store.js';

/**
 * Each attempt's request and response (issue 50, point 6; docs/spec-gaps.md, "Webhooks"):
 * `GET /v1/webhooks/{id}/deliveries/{did}/attempts` against a real receiver on loopback that
 * verifies every request with `standardwebhooks`, one that answers 500 then 200, one whose answer
 * is too long to keep, and a closed port.
 */
let secret: string | undefined;
let answer: (n: number) => Answer = () => 204;
let rx: Awaited<ReturnType<typeof startReceiver>>;
let viewer: string;

const h = useTestApp({
  config: { webhooks: { allowHttp: true, allowPrivate: true, retryDelaysSeconds: RETRY_DELAYS_SECONDS } },
  setup: async () => {
    rx = await startReceiver(
      () => secret,
      (_r, n) => answer(n),
    );
    const { user_id } = await h.admin.createUser({ name: 'viewer' });
    await h.admin.addMember(s.workspaceId, user_id, 'viewer');
    viewer = (await h.admin.createSession(user_id)).session_token;
  },
  teardown: async () => {
    await rx.close();
  },
});
const s = h.seeded;

type Attempt = Schemas['WebhookDeliveryAttempt'];
type Page = { data: Attempt[]; has_more: boolean; next_cursor: string | null };
const call = (method: string, url: string, payload?: object, headers: Record<string, string> = {}, credential = s.owner.session, workspace = s.workspaceId) =>
  h.app.inject({ method: method as 'POST', url, headers: as(credential, credential.startsWith('sk_') ? undefined : workspace, headers), ...(payload ? { payload } : {}) });
async function ok(method: string, url: string, payload?: object, credential = s.owner.session) {
  const res = await call(method, url, payload, {}, credential);
  assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.statusCode === 204 ? null : res.json();
}
async function hook(url = rx.url): Promise<Schemas['CreatedWebhook']> {
  const made = (await ok('POST', '/v1/webhooks', { url, event_types: ['snippet.created'] })) as Schemas['CreatedWebhook'];
  secret = made.secret;
  return made;
}
/** A snippet created, so an event goes to the endpoint: its one delivery. */
async function deliveryOf(w: { id: string }): Promise<Schemas['Delivery']> {
  await ok('POST', '/v1/snippets', { name: `attempted ${Math.random()}`, source: 'select 1' });
  await h.app.jobs.runDue();
  const [d] = (await ok('GET', `/v1/webhooks/${w.id}/deliveries`)).data as Schemas['Delivery'][];
  return d!;
}
const attempts = async (w: { id: string }, d: { id: string }, credential = s.owner.session, query = '') =>
  (await ok('GET', `/v1/webhooks/${w.id}/deliveries/${d.id}/attempts${query}`, undefined, credential)) as Page;
const header = (list: { name: string; value: string }[] | undefined, name: string) => list?.find((x) => x.name.toLowerCase() === name)?.value;
const drop = async (w: { id: string }) => {
  const now = await ok('GET', `/v1/webhooks/${w.id}`);
  await call('DELETE', `/v1/webhooks/${w.id}`, undefined, { 'if-match': now.etag });
};

describe('attempts', () => {
  test('500 then 200: two attempts, oldest first, each with the request sent (signed, as received) and what came back', async () => {
    const w = await hook();
    const start = rx.received.length;
    answer = (n) => (n === start + 1 ? { status: 500, headers: { 'x-trace': 'trace-1', 'content-type': 'text/plain' }, body: 'database unavailable' } : { status: 200, body: 'thanks' });
    const d = await deliveryOf(w);
    assert.deepEqual([d.state, d.attempts, d.last_status], ['pending', 1, 500]);
    const first = await attempts(w, d);
    assert.equal(first.data.length, 1, 'recorded with the outcome');
    h.clock.advanceSeconds(RETRY_DELAYS_SECONDS[0]!);
    await h.app.jobs.runDue();
    const page = await attempts(w, d);
    assert.deepEqual(
      page.data.map((a) => [a.number, a.response?.status, a.response?.body, a.error]),
      [
        [1, 500, 'database unavailable', 'answered 500: database unavailable'],
        [2, 200, 'thanks', null],
      ],
    );
    assert.deepEqual([page.has_more, page.next_cursor], [false, null]);
    const got = rx.received.slice(start);
    assert.equal(got.length, 2);
    for (const [i, a] of page.data.entries()) {
      const r = got[i]!;
      assert.ok(r.verified, 'standardwebhooks verified what was received');
      assert.equal(a.request.method, 'POST');
      assert.equal(a.request.url, rx.url);
      // The headers shown are those the receiver got, the signature among them; the body is the event.
      for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'content-type', 'user-agent', 'content-length'])
        assert.equal(header(a.request.headers, name), String(r.headers[name]), name);
      assert.deepEqual(
        a.request.headers.map((x) => x.name),
        ['content-type', 'user-agent', 'webhook-id', 'webhook-timestamp', 'webhook-signature', 'content-length'],
        'nothing else is sent',
      );
      assert.equal(a.request.body, r.body);
      assert.equal(a.request.body_truncated, false);
      new Webhook(secret!).verify(a.request.body, {
        'webhook-id': header(a.request.headers, 'webhook-id')!,
        'webhook-timestamp': header(a.request.headers, 'webhook-timestamp')!,
        'webhook-signature': header(a.request.headers, 'webhook-signature')!,
      });
      assert.ok(a.duration_ms >= 0);
      assert.equal(a.response?.body_truncated, false);
      assert.equal(a.response?.headers_truncated, false);
    }
    assert.equal(header(page.data[0]!.response?.headers, 'x-trace'), 'trace-1');
    assert.equal(page.data[1]!.started_at - page.data[0]!.started_at, RETRY_DELAYS_SECONDS[0], 'each started when it was due');
    assert.ok(!JSON.stringify(page).includes(secret!), 'the signing secret is never shown');

    // Pages by the attempt's number, oldest first; a cursor of another delivery's list is refused.
    const one = await attempts(w, d, s.owner.session, '?limit=1');
    assert.deepEqual([one.data.map((a) => a.number), one.has_more], [[1], true]);
    const two = await attempts(w, d, s.owner.session, `?limit=1&cursor=${one.next_cursor}`);
    assert.deepEqual([two.data.map((a) => a.number), two.has_more, two.next_cursor], [[2], false, null]);
    answer = () => 204;
    const other = await deliveryOf(w);
    const foreign = await call('GET', `/v1/webhooks/${w.id}/deliveries/${other.id}/attempts?limit=1&cursor=${one.next_cursor}`);
    assert.equal(foreign.statusCode, 422, foreign.body);
    await drop(w);
  });

  test('an answer too long to keep: the start of its body (NUL and a cut character made storable) and its first headers, marked truncated', async () => {
    const w = await hook();
    const many = Object.fromEntries(Array.from({ length: RESPONSE_HEADERS_MAX + 10 }, (_, i) => [`x-h${i}`, `v${i}`]));
    const big = `\u0000${'é'.repeat(RESPONSE_BODY_BYTES)}`;
    answer = () => ({ status: 503, headers: { ...many, 'x-long': 'L'.repeat(2000) }, body: big });
    const d = await deliveryOf(w);
    const [a] = (await attempts(w, d)).data;
    assert.equal(a!.response!.status, 503);
    assert.equal(a!.response!.body_truncated, true);
    // The first 4 KiB: NUL (1 byte, shown as U+FFFD: 3), 2,047 é (4,094), the first byte of the next (U+FFFD: 3).
    assert.equal(Buffer.byteLength(a!.response!.body), RESPONSE_BODY_BYTES + 4);
    assert.ok(a!.response!.body.endsWith('é\uFFFD'));
    assert.ok(a!.response!.body.startsWith(`\uFFFD${'é'.repeat(100)}`), 'NUL kept as U+FFFD: PostgreSQL stores no NUL');
    assert.equal(a!.response!.headers.length, RESPONSE_HEADERS_MAX);
    assert.equal(a!.response!.headers_truncated, true);
    assert.match(a!.error!, /^answered 503: /);
    assert.equal(d.last_status, 503);
    await drop(w);
  });

  test('a large event: its first 16 KiB shown, cut before a character and marked truncated (the receiver got it whole)', async () => {
    const w = await hook();
    answer = () => 204;
    const d = await deliveryOf(w);
    // No event of this build is that large: the delivery's stored body is made so, then sent again.
    // Two-byte characters from an odd offset: the 16,384th byte is the first of one.
    const prefix = `{"id":${JSON.stringify(d.event_id)},"data":{"note":"`;
    const large = `${prefix}${prefix.length % 2 === 0 ? 'a' : ''}${'é'.repeat(REQUEST_BODY_SHOWN_BYTES)}"}}`;
    await h.database.db.updateTable('webhook_deliveries').set({ body: large }).where('id', '=', d.id).execute();
    const start = rx.received.length;
    await ok('POST', `/v1/webhooks/${w.id}/deliveries/${d.id}:retry`, {});
    await h.app.jobs.runDue();
    assert.equal(rx.received[start]!.body, large, 'sent whole');
    assert.ok(rx.received[start]!.verified);
    const [, a] = (await attempts(w, d)).data;
    assert.equal(a!.number, 2);
    assert.equal(a!.request.body_truncated, true);
    // 16,384 bytes would end inside an é: one byte fewer, and no U+FFFD.
    assert.equal(Buffer.byteLength(a!.request.body!), REQUEST_BODY_SHOWN_BYTES - 1);
    assert.ok(!a!.request.body!.includes('\uFFFD'));
    assert.ok(large.startsWith(a!.request.body!));
    assert.equal(header(a!.request.headers, 'content-length'), String(Buffer.byteLength(large)));
    await drop(w);
  });

  test('a closed port on 127.0.0.1: an attempt with no response, its error, and the request it tried', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const w = await hook(`http://127.0.0.1:${port}/gone`);
    const d = await deliveryOf(w);
    assert.deepEqual([d.attempts, d.last_status], [1, null]);
    const [a] = (await attempts(w, d)).data;
    assert.equal(a!.number, 1);
    assert.equal(a!.response, null);
    assert.match(a!.error!, /ECONNREFUSED/);
    assert.equal(a!.error, d.last_error);
    assert.equal(a!.request.url, `http://127.0.0.1:${port}/gone`);
    assert.equal(header(a!.request.headers, 'webhook-id'), d.event_id);
    await drop(w);
  });
});

describe('who reads them', () => {
  test('another workspace, another endpoint, an unknown delivery: 404', async () => {
    answer = () => 204;
    const w = await hook();
    const d = await deliveryOf(w);
    const w2 = await hook();
    const other = await h.seed('Attempts elsewhere');
    const there = await h.app.inject({ method: 'GET', url: `/v1/webhooks/${w.id}/deliveries/${d.id}/attempts`, headers: as(other.owner.session, other.workspaceId) });
    assert.equal(there.statusCode, 404);
    const wrongEndpoint = await call('GET', `/v1/webhooks/${w2.id}/deliveries/${d.id}/attempts`);
    assert.equal(wrongEndpoint.statusCode, 404);
    assert.deepEqual(firstError(wrongEndpoint.json()).path, ['path', 'did']);
    const unknown = await call('GET', `/v1/webhooks/${w.id}/deliveries/whd_0000000000000000000000000a/attempts`);
    assert.equal(unknown.statusCode, 404);
    assert.equal((await attempts(w, d)).data.length, 1);
    await drop(w);
    await drop(w2);
  });

  test('as the deliveries list: owners and admins; a member 403 7023, a viewer 403 7027', async () => {
    const w = await hook();
    const d = await deliveryOf(w);
    const url = `/v1/webhooks/${w.id}/deliveries/${d.id}/attempts`;
    assert.equal((await attempts(w, d, s.admin.session)).data.length, 1);
    for (const [who, code] of [
      [s.member.session, 7023],
      [viewer, 7027],
    ] as const) {
      const res = await call('GET', url, undefined, {}, who);
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(firstError(res.json()).code, code);
      // The same answer as the list of deliveries gives them.
      assert.equal((await call('GET', `/v1/webhooks/${w.id}/deliveries`, undefined, {}, who)).statusCode, 403);
    }
    await drop(w);
  });

  test('tokens: webhooks:read reads the attempts, the body sent (an audit event) only with audit:read too', async () => {
    const w = await hook();
    const d = await deliveryOf(w);
    const token = async (scopes: string[]) => (await ok('POST', '/v1/api_tokens', { name: `attempts ${scopes.join(' ')}`, scopes })).token as string;
    const reader = await token(['webhooks:read']);
    const auditor = await token(['webhooks:read', 'audit:read']);
    const auditOnly = await token(['audit:read']);
    const [plain] = (await attempts(w, d, reader)).data;
    assert.equal(plain!.request.body, null, 'withheld');
    assert.equal(header(plain!.request.headers, 'webhook-id'), d.event_id, 'the rest is shown');
    const [full] = (await attempts(w, d, auditor)).data;
    assert.equal(JSON.parse(full!.request.body!).id, d.event_id);
    const refused = await call('GET', `/v1/webhooks/${w.id}/deliveries/${d.id}/attempts`, undefined, {}, auditOnly);
    assert.equal(refused.statusCode, 403);
    assert.deepEqual(firstError(refused.json()).metadata, { required_scope: 'webhooks:read' });
    await drop(w);
  });
});

describe('retention', () => {
  test('attempts go with their delivery, which goes with its endpoint', async () => {
    const w = await hook();
    answer = () => 500;
    const d = await deliveryOf(w);
    h.clock.advanceSeconds(RETRY_DELAYS_SECONDS[0]!);
    await h.app.jobs.runDue();
    const held = () => h.database.db.selectFrom('webhook_delivery_attempts').select('number').where('delivery_id', '=', d.id).execute();
    assert.equal((await held()).length, 2);
    await drop(w);
    assert.equal((await held()).length, 0);
    answer = () => 204;
  });

  test('a delivery keeps its newest attempts only (retries by hand have no end)', async () => {
    const w = await hook();
    const d = await deliveryOf(w);
    const row = {
      delivery_id: d.id,
      started_at: 1,
      duration_ms: 1,
      url: rx.url,
      request_headers: '[]',
      response_status: 204,
      response_headers: '[]',
      response_headers_truncated: 0,
      response_body: '',
      response_body_truncated: 0,
      error: null,
    };
    for (let i = 0; i < 4; i++) await webhookStore.insertAttempt(h.database.db, row, 3);
    const page = await attempts(w, d);
    assert.deepEqual(
      page.data.map((a) => a.number),
      [3, 4, 5],
      'the first (the real one) and the second went; numbers go on',
    );
    await drop(w);
  });
});
