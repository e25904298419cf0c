import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ifMatch, unwrap } from '@workspace-platform/sdk';
import { useTestApp, type Schemas } from '../helpers/test-app.js';
import { DISABLE_AFTER_SECONDS, RETRY_DELAYS_SECONDS } from '../../src/webhooks/delivery-job.js';
import { CIRCUIT_FAILURES, CIRCUIT_OPEN_SECONDS } from '../../src/webhooks/circuit.js';
import { WEBHOOK_DELIVER } from '../../src/webhooks/job-kinds.js';

/**
 * The per-endpoint circuit (issue 48, item 2; src/webhooks/circuit.ts), in process with the
 * manual clock: a receiver that drops every connection fails 3 deliveries in a row and its circuit
 * opens; its deliveries then wait without being sent or counted, one probe goes through when it
 * half-opens, a failed probe opens it for twice as long and an answered one closes it. The
 * contract's retry schedule and the disabling after a day of failures still hold.
 */

/** A receiver on 127.0.0.1 that drops every connection at once ('drop') or answers 204 or 500. */
async function startFlaky() {
  let mode: 'drop' | 204 | 500 = 'drop';
  let connections = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(mode as number, { connection: 'close' }).end());
  });
  server.on('connection', (socket) => {
    connections++;
    if (mode === 'drop') socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    connections: () => connections,
    set: (m: 'drop' | 204 | 500) => (mode = m),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
let rx: Awaited<ReturnType<typeof startFlaky>>;

const h = useTestApp({
  config: { webhooks: { allowHttp: true, allowPrivate: true, retryDelaysSeconds: RETRY_DELAYS_SECONDS } },
  setup: async () => {
    rx = await startFlaky();
  },
  teardown: async () => {
    await rx.close();
  },
});
const s = h.seeded;

type Hook = Schemas['Webhook'];

// Made when called: the seed exists only once useTestApp's `before` ran.
const wsp = () => h.client(s.owner.session, s.workspaceId);
const endpoint = (id: string) => unwrap(wsp().GET('/v1/webhooks/{id}', { params: { path: { id } } }));
const deliveries = async (id: string) => (await unwrap(wsp().GET('/v1/webhooks/{id}/deliveries', { params: { path: { id }, query: { limit: 100 } } }))).data.reverse();
let n = 0;
const snippet = () => unwrap(wsp().POST('/v1/snippets', { body: { name: `circuit ${++n}`, source: 'select 1' } }));
const now = () => Math.floor(h.clock.nowMs() / 1000);

/** An endpoint to the receiver, taking snippet events, deleted when the test ends. */
async function hook(t: TestContext): Promise<Hook> {
  const w = await unwrap(wsp().POST('/v1/webhooks', { body: { url: rx.url, event_types: ['snippet.*'] } }));
  t.after(async () => void (await unwrap(wsp().DELETE('/v1/webhooks/{id}', { params: { path: { id: w.id }, header: ifMatch(await endpoint(w.id)) } }))));
  return w;
}

test('3 dropped connections in a row open the circuit; its deliveries then wait unsent and uncounted; one probe at half-open; a failed probe doubles the wait, an answer closes it', async (t) => {
  const w = await hook(t);
  assert.deepEqual(w.circuit, { state: 'closed', open_until: null }, 'a new endpoint: closed');
  // One at a time: each failure is counted on its own.
  for (let i = 1; i <= CIRCUIT_FAILURES; i++) {
    await snippet();
    await h.app.jobs.runDue();
    assert.equal(rx.connections(), i);
    const got = await endpoint(w.id);
    if (i < CIRCUIT_FAILURES) assert.deepEqual(got.circuit, { state: 'closed', open_until: null }, `closed after ${i} failures`);
  }
  const opened = await endpoint(w.id);
  assert.deepEqual(opened.circuit, { state: 'open', open_until: now() + CIRCUIT_OPEN_SECONDS });
  assert.notEqual(opened.etag, w.etag, 'what GET shows changed, and so did the etag');

  // While open: new deliveries and the retries of the failed ones are not sent and not counted.
  await snippet();
  await snippet();
  h.clock.advanceSeconds(RETRY_DELAYS_SECONDS[0]!);
  await h.app.jobs.runDue();
  assert.equal(rx.connections(), CIRCUIT_FAILURES, 'nothing sent while the circuit is open');
  const waiting = await deliveries(w.id);
  assert.equal(waiting.length, 5);
  assert.deepEqual(
    waiting.map((d) => [d.state, d.attempts, d.next_attempt_at]),
    [
      ['pending', 1, opened.circuit.open_until],
      ['pending', 1, opened.circuit.open_until],
      ['pending', 1, opened.circuit.open_until],
      ['pending', 0, opened.circuit.open_until],
      ['pending', 0, opened.circuit.open_until],
    ],
  );
  const jobs = await h.database.db
    .selectFrom('jobs')
    .select(['state', 'attempts', 'run_at'])
    .where('kind', '=', WEBHOOK_DELIVER)
    .where('state', '!=', 'succeeded')
    .where('state', '!=', 'failed')
    .execute();
  assert.ok(
    jobs.every((j) => j.state === 'queued' && j.attempts === 0 && Number(j.run_at) === opened.circuit.open_until! * 1000),
    `every job waits, its attempt given back: ${JSON.stringify(jobs)}`,
  );

  // Half-open: exactly one of the five is sent, as the probe; it fails, and the circuit opens for twice as long.
  h.clock.advanceSeconds(opened.circuit.open_until - now());
  await h.app.jobs.runDue();
  assert.equal(rx.connections(), CIRCUIT_FAILURES + 1, 'one probe');
  const reopened = await endpoint(w.id);
  assert.deepEqual(reopened.circuit, { state: 'open', open_until: now() + 2 * CIRCUIT_OPEN_SECONDS });
  assert.equal(
    (await deliveries(w.id)).reduce((sum, d) => sum + d.attempts, 0),
    CIRCUIT_FAILURES + 1,
    'only the probe counted an attempt',
  );

  // The receiver is back: the next probe is answered and closes the circuit; the rest then go
  // out (a probe that had failed waits for its own next retry, as the contract's schedule says).
  rx.set(204);
  h.clock.advanceSeconds(reopened.circuit.open_until - now());
  await h.app.jobs.runDue();
  assert.deepEqual((await endpoint(w.id)).circuit, { state: 'closed', open_until: null });
  h.clock.advanceSeconds(RETRY_DELAYS_SECONDS[1]!);
  await h.app.jobs.runDue();
  const done = await deliveries(w.id);
  assert.deepEqual(
    done.map((d) => d.state),
    ['succeeded', 'succeeded', 'succeeded', 'succeeded', 'succeeded'],
  );
  // Sent: the three failures, the failed probe, and each delivery once with success.
  assert.equal(rx.connections(), CIRCUIT_FAILURES + 1 + 5);
  assert.equal(
    done.reduce((sum, d) => sum + d.attempts, 0),
    rx.connections(),
    'an attempt is counted for each send and for nothing else',
  );
});

test('answers are not circuit failures: three 500s in a row leave it closed (the retry schedule handles them)', async (t) => {
  rx.set(500);
  const w = await hook(t);
  for (let i = 0; i < CIRCUIT_FAILURES + 1; i++) {
    await snippet();
    await h.app.jobs.runDue();
  }
  assert.deepEqual((await endpoint(w.id)).circuit, { state: 'closed', open_until: null });
  assert.ok((await deliveries(w.id)).every((d) => d.state === 'pending' && d.attempts === 1));
});

test("an endpoint that never answers: its circuit opens, yet the contract's retry schedule runs and a day of failures disables it; enabling it again closes the circuit", async (t) => {
  rx.set('drop');
  const w = await hook(t);
  const before = rx.connections();
  await snippet();
  await h.app.jobs.runDue();
  let waited = 0;
  const attemptsAt: number[] = [0];
  for (const delay of RETRY_DELAYS_SECONDS) {
    if (waited >= DISABLE_AFTER_SECONDS) break;
    h.clock.advanceSeconds(delay);
    waited += delay;
    const sent = rx.connections();
    await h.app.jobs.runDue();
    if (rx.connections() > sent) attemptsAt.push(waited);
  }
  // Every attempt of the schedule was made when due: the circuit's waits (up to an hour) end
  // before the next retry is due, and each retry made while it is open is its probe.
  assert.deepEqual(
    attemptsAt,
    RETRY_DELAYS_SECONDS.reduce((at, d) => [...at, at.at(-1)! + d], [0]),
  );
  assert.equal(rx.connections() - before, RETRY_DELAYS_SECONDS.length + 1);
  const disabled = await endpoint(w.id);
  assert.equal(disabled.state, 'disabled');
  assert.equal(disabled.circuit.state, 'open');
  const [d] = await deliveries(w.id);
  assert.deepEqual([d!.state, d!.attempts], ['failed', RETRY_DELAYS_SECONDS.length + 1]);
  assert.equal((await h.database.db.selectFrom('events').select('id').where('type', '=', 'webhook.disabled').where('resource_id', '=', w.id).execute()).length, 1);
  const enabled = await unwrap(wsp().PATCH('/v1/webhooks/{id}', { params: { path: { id: w.id }, header: ifMatch(disabled) }, body: { enabled: true } }));
  assert.deepEqual([enabled.state, enabled.circuit], ['enabled', { state: 'closed', open_until: null }]);
});
