import { test } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';

/** docs/spec-gaps.md, "Conventions" ETags, on PATCH /v1/workspaces/{id}. */
const h = useTestApp();
const s = h.seeded;

const url = () => `/v1/workspaces/${s.workspaceId}`;
const read = async () => {
  const res = await h.app.inject({ method: 'GET', url: url(), headers: as(s.owner.session, s.workspaceId) });
  assert.equal(res.statusCode, 200);
  return res;
};
const patch = (ifMatch: string, name: string, credential = s.owner.session) =>
  h.app.inject({ method: 'PATCH', url: url(), headers: as(credential, s.workspaceId, { 'if-match': ifMatch }), payload: { name } });

test('the ETag header is the quoted etag field, on reads and on writes, and changes with each write', async () => {
  const res = await read();
  const etag = res.json().etag;
  assert.ok(etag.length > 0);
  assert.equal(res.headers.etag, `"${etag}"`);
  const w = await patch(etag, 'One');
  assert.equal(w.statusCode, 200);
  assert.notEqual(w.json().etag, etag);
  assert.equal(w.headers.etag, `"${w.json().etag}"`);
  assert.equal((await read()).json().etag, w.json().etag);
});

test('If-Match accepted quoted, bare, weak (W/"...") and as *', async () => {
  for (const form of [(e: string) => `"${e}"`, (e: string) => e, (e: string) => `W/"${e}"`, () => '*']) {
    const before = (await read()).json();
    const name = `n-${Math.random().toString(36).slice(2, 8)}`;
    const res = await patch(form(before.etag), name);
    assert.equal(res.statusCode, 200, `${form('E')}: ${res.body}`);
    assert.equal(res.json().name, name);
    assert.notEqual(res.json().etag, before.etag);
  }
});

test('a stale If-Match is 409 (7030) with metadata.current_etag, and nothing changes', async () => {
  const before = (await read()).json();
  for (const stale of ['nope', '"nope"', `${before.etag}x`, `"${before.etag}`, `W/${before.etag.slice(1)}`]) {
    const res = await patch(stale, 'Never');
    assert.equal(res.statusCode, 409, stale);
    const e = firstError(res.json());
    assert.equal(e.code, 7030);
    assert.deepEqual(e.metadata, { current_etag: before.etag });
  }
  assert.deepEqual((await read()).json(), before);
});

test('the etag is checked before the no-op rule: a stale etag with the current name is still 409', async () => {
  const before = (await read()).json();
  const res = await patch('stale', before.name);
  assert.equal(res.statusCode, 409);
});

test("20 concurrent PATCHes with the same If-Match: exactly one 200, 19 × 409 naming the winner's etag", async () => {
  const { etag } = (await read()).json();
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => patch(`"${etag}"`, `racer-${i}`)));
  const winners = results.filter((r) => r.statusCode === 200);
  const losers = results.filter((r) => r.statusCode === 409);
  assert.equal(winners.length, 1, results.map((r) => r.statusCode).join(','));
  assert.equal(losers.length, 19);
  const winner = winners[0]!.json();
  for (const l of losers) assert.equal(firstError(l.json()).metadata?.current_etag, winner.etag);
  const now = (await read()).json();
  assert.equal(now.etag, winner.etag);
  assert.equal(now.name, winner.name);
});
