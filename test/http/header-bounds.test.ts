import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';

/** The spec's limits on If-Match (1-256) and Idempotency-Key (1-64), at and one past each bound. */
const h = useTestApp();
const s = h.seeded;

const patch = (headers: Record<string, string>, name = 'Renamed') =>
  h.app.inject({ method: 'PATCH', url: `/v1/workspaces/${s.workspaceId}`, headers: { ...as(s.owner.session, s.workspaceId), ...headers }, payload: { name } });
const currentEtag = async () => {
  const res = await h.app.inject({ method: 'GET', url: `/v1/workspaces/${s.workspaceId}`, headers: as(s.owner.session, s.workspaceId) });
  return res.json().etag as string;
};

function expect422(res: { statusCode: number; json(): unknown; body: string }, header: string) {
  assert.equal(res.statusCode, 422, res.body);
  const e = firstError(res.json());
  assert.equal(e.code, 7003);
  assert.deepEqual(e.path, ['headers', header]);
}

describe('If-Match', () => {
  test('256 characters is well-formed (409, stale, with the current etag); 257 is 422', async () => {
    const etag = await currentEtag();
    const res = await patch({ 'if-match': 'e'.repeat(256) });
    assert.equal(res.statusCode, 409, res.body);
    assert.equal(firstError(res.json()).code, 7030);
    assert.equal(firstError(res.json()).metadata?.current_etag, etag);
    expect422(await patch({ 'if-match': 'e'.repeat(257) }), 'if-match');
    // 256 with the quotes counted is still within the bound.
    assert.equal((await patch({ 'if-match': `"${'e'.repeat(254)}"` })).statusCode, 409);
    assert.equal(await currentEtag(), etag, 'nothing was written');
  });

  test('missing where required, or empty: 422 on ["headers","if-match"]', async () => {
    expect422(await patch({}), 'if-match');
    expect422(await patch({ 'if-match': '' }), 'if-match');
  });

  test('a missing If-Match is 422 before the 403 of a missing role (order of checks)', async () => {
    const res = await h.app.inject({
      method: 'PATCH',
      url: `/v1/workspaces/${s.workspaceId}`,
      headers: as(s.member.session, s.workspaceId),
      payload: { name: 'x' },
    });
    expect422(res, 'if-match');
  });
});

describe('Idempotency-Key', () => {
  test('64 characters is accepted; 65 and empty are 422 on ["headers","idempotency-key"] (PATCH)', async () => {
    const ok = await patch({ 'if-match': await currentEtag(), 'idempotency-key': 'k'.repeat(64) });
    assert.equal(ok.statusCode, 200, ok.body);
    expect422(await patch({ 'if-match': await currentEtag(), 'idempotency-key': 'k'.repeat(65) }), 'idempotency-key');
    expect422(await patch({ 'if-match': await currentEtag(), 'idempotency-key': '' }), 'idempotency-key');
  });

  test('the same bounds on POST and DELETE', async () => {
    const post = (key: string) => h.app.inject({ method: 'POST', url: '/v1/api_tokens', headers: as(s.owner.session, s.workspaceId, { 'idempotency-key': key }), payload: { name: 'b' } });
    assert.equal((await post('p'.repeat(64))).statusCode, 201);
    assert.equal((await post('x')).statusCode, 201, 'one character is enough');
    expect422(await post('p'.repeat(65)), 'idempotency-key');
    expect422(await post(''), 'idempotency-key');
    const del = (key: string) => h.app.inject({ method: 'DELETE', url: '/v1/sessions/current', headers: as(s.admin.session, undefined, { 'idempotency-key': key }) });
    expect422(await del('d'.repeat(65)), 'idempotency-key');
    expect422(await del(''), 'idempotency-key');
    assert.equal((await h.app.inject({ method: 'GET', url: '/v1/me', headers: as(s.admin.session) })).statusCode, 200, 'the session was not revoked');
  });

  test('no 422 entry carries anything but the envelope fields', async () => {
    const res = await patch({ 'if-match': 'e'.repeat(257), 'idempotency-key': 'k'.repeat(65) });
    assert.equal(res.statusCode, 422);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['errors', 'result', 'success']);
    const paths = body.errors.map((e: { path: string[] }) => e.path.join('.')).sort();
    assert.deepEqual(paths, ['headers.idempotency-key', 'headers.if-match'], 'one entry per violated header');
  });
});
