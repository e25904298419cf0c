import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/shared/clock.js';
import { HetznerClient, retryAfterSeconds } from '../../src/compute/provider/hetzner-client.js';
import { ProviderError } from '../../src/compute/provider/types.js';
import { ProviderStub, SNAPSHOT_GROSS_PER_GB } from './provider-stub.js';

/** The provider adapter on its own, against the stub of the provider's HTTP API. */
let stub: ProviderStub;
const clock = new ManualClock(Date.UTC(2026, 0, 1));
const client = (token = 'tok', timeoutMs = 2000) => new HetznerClient({ baseUrl: stub.url, token, timeoutMs, clock });

before(async () => {
  stub = new ProviderStub(['tok', 'other']);
  stub.now = () => clock.nowMs();
  await stub.start();
});
after(() => stub.stop());

async function providerError(p: Promise<unknown>): Promise<ProviderError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof ProviderError, `not a ProviderError: ${String(err)}`);
    return err;
  }
  throw new Error('expected a ProviderError');
}

describe('Hetzner client', () => {
  test('reads the catalog across pages: locations, server types with monthly gross prices (deprecated ones left out), images, the snapshot price', async () => {
    stub.maxPerPage = 2;
    const c = client();
    assert.deepEqual(
      (await c.listLocations()).map((l) => l.name),
      ['fsn1', 'nbg1', 'hel1', 'ash'],
    );
    assert.deepEqual((await c.listLocations())[0], { name: 'fsn1', description: 'FSN1 DC Park 1', country: 'DE', city: 'fsn1', networkZone: 'eu-central' });
    const types = await c.listServerTypes();
    assert.deepEqual(
      types.map((t) => t.name),
      ['cx22', 'cx32', 'cpx11', 'cpx21', 'cax11'],
    );
    assert.deepEqual(types[1], { name: 'cx32', cores: 4, memoryGb: 8, diskGb: 80, architecture: 'x86', prices: ['fsn1', 'nbg1', 'hel1'].map((location) => ({ location, monthlyGross: 7.59 })) });
    assert.equal(types[4]!.architecture, 'arm');
    assert.deepEqual(
      await c.listImages(),
      ['ubuntu-24.04', 'debian-12', 'ubuntu-22.04'].map((name) => ({ name, description: name })),
    );
    assert.ok(
      stub.requestsTo('GET', /^\/images$/).every((r) => !r.query.includes('type=snapshot')),
      'snapshots are not offered images',
    );
    assert.equal(await c.snapshotPricePerGbMonth(), SNAPSHOT_GROSS_PER_GB);
    assert.ok(
      stub.requestsTo('GET', /^\/locations$/).some((r) => r.query.includes('page=2')),
      'followed next_page',
    );
    stub.maxPerPage = 50;
  });

  test('server and snapshot lifecycle with action polling; labels find what was made; gone is null, not an error', async () => {
    const c = client();
    const { server, action } = await c.createServer({ name: 'wsp-a', serverType: 'cx22', image: 'ubuntu-24.04', location: 'fsn1', labels: { 'wsp-machine': 'a' } });
    assert.equal(action.status, 'running');
    assert.equal((await c.getAction(action.id)).status, 'success');
    assert.equal((await c.getServer(server.id))?.status, 'running');
    assert.deepEqual(
      (await c.findServers({ 'wsp-machine': 'a' })).map((s) => s.id),
      [server.id],
    );
    assert.deepEqual(await c.findServers({ 'wsp-machine': 'b' }), []);
    assert.deepEqual(await client('other').findServers({ 'wsp-machine': 'a' }), [], 'another token is another project');
    const snap = await c.createSnapshot(server.id, { description: 'd', labels: { 'wsp-operation': 'x' } });
    assert.equal(snap.image.status, 'creating');
    assert.equal(snap.image.sizeGb, null);
    await c.getAction(snap.action.id);
    const image = await c.getImage(snap.image.id);
    assert.equal(image?.status, 'available');
    assert.equal(image?.sizeGb, stub.snapshotSizeGb);
    assert.equal(image.id > 2 ** 32, true, '64-bit ids survive');
    assert.deepEqual(
      (await c.findSnapshots({ 'wsp-operation': 'x' })).map((i) => i.id),
      [snap.image.id],
    );
    const del = await c.deleteServer(server.id);
    await c.getAction(del!.id);
    assert.equal(await c.getServer(server.id), null);
    assert.equal(await c.deleteServer(server.id), null);
    assert.equal(await c.deleteImage(snap.image.id), true);
    assert.equal(await c.deleteImage(snap.image.id), false);
    assert.equal(await c.getImage(snap.image.id), null);
  });

  test("the provider's errors: the request's fault is `rejected`, the provider's is `unavailable`", async () => {
    const c = client();
    const invalid = await providerError(c.createServer({ name: 'x', serverType: 'nope', image: 'ubuntu-24.04', location: 'fsn1', labels: {} }));
    assert.equal(invalid.failure, 'rejected');
    assert.equal(invalid.providerCode, 'invalid_input');
    const unauthorized = await providerError(client('wrong').listLocations());
    assert.equal(unauthorized.failure, 'rejected');
    assert.equal(unauthorized.providerCode, 'unauthorized');
    for (const [status, code] of [
      [503, 'unavailable'],
      [423, 'locked'],
      [500, 'server_error'],
      [409, 'conflict'],
      [412, 'resource_unavailable'],
    ] as const) {
      stub.fail({ path: /^\/locations$/, status, code });
      const e = await providerError(c.listLocations());
      assert.equal(e.failure, 'unavailable', code);
      assert.equal(e.providerCode, code);
    }
    stub.fail({ path: /^\/locations$/, status: 502, code: 'x', message: 'x' });
    assert.equal((await providerError(c.listLocations())).failure, 'unavailable', 'any 5xx');
  });

  test('a provider that does not answer in time is `unavailable` (timeout)', async () => {
    stub.fail({ path: /^\/server_types$/, hang: true });
    const started = Date.now();
    const e = await providerError(client('tok', 150).listServerTypes());
    assert.equal(e.failure, 'unavailable');
    assert.equal(e.providerCode, 'timeout');
    assert.ok(Date.now() - started < 2000);
  });

  test('an unreachable provider is `unavailable` (network)', async () => {
    const c = new HetznerClient({ baseUrl: 'http://127.0.0.1:1/v1', token: 't', timeoutMs: 500, clock });
    const e = await providerError(c.listLocations());
    assert.equal(e.failure, 'unavailable');
    assert.equal(e.providerCode, 'network');
  });

  test('a 429 is honoured: no request is sent until Retry-After has passed', async () => {
    const c = client();
    stub.fail({ path: /^\/locations$/, status: 429, code: 'rate_limit_exceeded', headers: { 'retry-after': '20' } });
    const first = await providerError(c.listLocations());
    assert.equal(first.providerCode, 'rate_limit_exceeded');
    assert.equal(first.retryAfterSeconds, 20);
    const sent = stub.requests.length;
    clock.advanceSeconds(5);
    const blocked = await providerError(c.listServerTypes());
    assert.equal(blocked.retryAfterSeconds, 15);
    assert.equal(stub.requests.length, sent, 'nothing sent while the limit lasts');
    clock.advanceSeconds(15);
    assert.equal((await c.listLocations()).length, 4);
  });

  test("a 429 without Retry-After waits for RateLimit-Reset (Hetzner's Unix timestamp)", async () => {
    const c = client();
    const reset = Math.floor(clock.nowMs() / 1000) + 8;
    stub.fail({ path: /^\/pricing$/, status: 429, code: 'rate_limit_exceeded', headers: { 'ratelimit-reset': String(reset) } });
    assert.equal((await providerError(c.snapshotPricePerGbMonth())).retryAfterSeconds, 8);
    clock.advanceSeconds(8);
    assert.equal(await c.snapshotPricePerGbMonth(), SNAPSHOT_GROSS_PER_GB);
  });

  test('a spent budget (RateLimit-Remaining: 0) pauses the next request for the refill second', async () => {
    const c = client();
    stub.budget = 1; // this answer says 0 remain
    await c.listLocations();
    const sent = stub.requests.length;
    const e = await providerError(c.listLocations());
    assert.equal(e.providerCode, 'rate_limit_exceeded');
    assert.equal(stub.requests.length, sent);
    stub.budget = 3600;
    clock.advanceSeconds(1);
    assert.equal((await c.listLocations()).length, 4);
  });

  test('Retry-After as an HTTP date and RateLimit-Reset as seconds are understood too', () => {
    const now = Date.UTC(2026, 0, 1);
    assert.equal(retryAfterSeconds(new Headers({ 'retry-after': new Date(now + 42_000).toUTCString() }), now), 42);
    assert.equal(retryAfterSeconds(new Headers({ 'ratelimit-reset': '7' }), now), 7);
    assert.equal(retryAfterSeconds(new Headers({}), now), null);
  });
});
