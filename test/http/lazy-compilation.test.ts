import { test, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, as, type TestApp } from '../helpers/harness.js';
import { LazyCompilation } from '../../src/http/lazy-compilation.js';

/**
 * Route schemas compile when first needed (src/http/lazy-compilation.ts), so `wsp serve` is
 * ready without compiling hundreds of them; the server warms the rest once it listens. What must
 * hold: a request validates and serializes exactly as before whether or not its schemas were
 * compiled yet, and warming compiles every schema of every route, reporting one that cannot be.
 */
let h: TestApp | undefined;
after(() => h?.close());

describe('route schemas compiled lazily', () => {
  test('nothing is compiled at start; requests compile what they need; warm() compiles the rest and every schema compiles', async () => {
    h = await createTestApp();
    const s = await h.seed();
    const compilation = h.app.schemaCompilation;
    const atStart = compilation.waiting;
    assert.ok(atStart > 200, `every route's validators and serializers wait (${atStart})`);

    const bad = await h.app.inject({ method: 'POST', url: '/v1/secrets', headers: as(s.owner.session, s.workspaceId), payload: { name: 'x', extra: 1 } });
    assert.equal(bad.statusCode, 422, 'validated by a schema compiled for this request');
    assert.deepEqual(bad.json().errors[0].path, ['body', 'extra']);
    const ok = await h.app.inject({ method: 'POST', url: '/v1/secrets', headers: as(s.owner.session, s.workspaceId), payload: { name: 'x' } });
    assert.equal(ok.statusCode, 201, ok.body);
    assert.deepEqual(Object.keys(ok.json()).sort(), ['created_at', 'etag', 'id', 'name', 'updated_at', 'workspace_id'].sort(), 'serialized by the response schema');
    const afterRequests = compilation.waiting;
    assert.ok(afterRequests < atStart, 'the requests compiled their route’s schemas');

    await compilation.warm();
    assert.equal(compilation.waiting, 0, 'warm() compiled every remaining schema');
    const again = await h.app.inject({ method: 'POST', url: '/v1/secrets', headers: as(s.owner.session, s.workspaceId), payload: { name: 'x', extra: 1 } });
    assert.equal(again.statusCode, 422);
  });

  test('a schema that does not compile fails its first request and warm(), and stays waiting', async () => {
    const compilation = new LazyCompilation();
    const factory = compilation.compilersFactory(() => {
      throw new Error('no such keyword');
    });
    const build = factory.buildValidator as unknown as () => (route: unknown) => (data: unknown) => boolean;
    const validate = build()({ schema: {}, method: 'GET', url: '/x', httpPart: 'body' });
    assert.equal(compilation.waiting, 1);
    assert.throws(() => validate({}), /no such keyword/);
    await assert.rejects(compilation.warm(), /no such keyword/);
    assert.equal(compilation.waiting, 1);
  });
});
