import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { as, firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { hasValidChecksum } from '../../src/auth/credentials.js';

const h = useTestApp();
const s = h.seeded;

const create = (headers: Record<string, string>, body: unknown) => h.app.inject({ method: 'POST', url: '/v1/api_tokens', headers, payload: body as object });

describe('POST /v1/api_tokens', () => {
  test('an owner creates a token: 201 with exactly id, name, token, expires_at', async () => {
    const expires = Math.floor(h.clock.nowMs() / 1000) + 3600;
    const res = await create(as(s.owner.session, s.workspaceId), { name: 'deploy', expires_at: expires });
    assert.equal(res.statusCode, 201);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['expires_at', 'id', 'name', 'token']);
    assert.match(body.id, /^tok_[0-9a-z]{26}$/);
    assert.equal(body.name, 'deploy');
    assert.equal(body.expires_at, expires);
    assert.match(body.token, /^sk_svc_[0-9A-Za-z]{38}$/);
    assert.ok(hasValidChecksum(body.token));
    const who = await h.app.inject({ method: 'GET', url: '/v1/me', headers: as(body.token) });
    assert.equal(who.statusCode, 200);
    assert.equal(who.json().workspace.id, s.workspaceId);
    assert.equal(who.json().credential.kind, 'api_token');
  });

  test('an admin may create; a member may not (403)', async () => {
    assert.equal((await create(as(s.admin.session, s.workspaceId), { name: 'a' })).statusCode, 201);
    const res = await create(as(s.member.session, s.workspaceId), { name: 'm' });
    assert.equal(res.statusCode, 403);
    assert.equal(firstError(res.json()).code, 7023);
  });

  test('a workspace API token can list but cannot create or revoke (403)', async () => {
    assert.equal((await create(as(s.apiToken), { name: 'x' })).statusCode, 403);
    const del = await h.app.inject({ method: 'DELETE', url: `/v1/api_tokens/${s.apiTokenId}`, headers: as(s.apiToken) });
    assert.equal(del.statusCode, 403);
    const list = await h.app.inject({ method: 'GET', url: '/v1/api_tokens', headers: as(s.apiToken) });
    assert.equal(list.statusCode, 200);
  });

  test('expires_at in the past or now is 422 on body.expires_at; absent or null never expires', async () => {
    const now = Math.floor(h.clock.nowMs() / 1000);
    for (const expires_at of [now, now - 1, 0]) {
      const res = await create(as(s.owner.session, s.workspaceId), { name: 'old', expires_at });
      assert.equal(res.statusCode, 422);
      assert.deepEqual(firstError(res.json()).path, ['body', 'expires_at']);
    }
    const ms = await create(as(s.owner.session, s.workspaceId), { name: 'ms', expires_at: Date.now() * 1000 });
    assert.equal(ms.statusCode, 422);
    assert.equal((await create(as(s.owner.session, s.workspaceId), { name: 'never', expires_at: null })).json().expires_at, null);
    assert.equal((await create(as(s.owner.session, s.workspaceId), { name: 'never2' })).json().expires_at, null);
  });

  test('order of checks: an expires_at in the past is 422 before the 403 of a missing role or a foreign Service-Context', async () => {
    const now = Math.floor(h.clock.nowMs() / 1000);
    const other = await h.seed('Elsewhere');
    const callers: [string, Record<string, string>][] = [
      ['a member (no role)', as(s.member.session, s.workspaceId)],
      ['a workspace API token (no role)', as(s.apiToken)],
      ['a workspace token naming another workspace', as(s.apiToken, other.workspaceId)],
      ['an owner naming a workspace not theirs', as(s.owner.session, other.workspaceId)],
      ['a session without Service-Context', as(s.owner.session)],
    ];
    for (const [who, headers] of callers) {
      for (const expires_at of [5, now]) {
        const res = await create(headers, { name: 'early', expires_at });
        assert.equal(res.statusCode, 422, `${who}, expires_at ${expires_at}: ${res.body}`);
        assert.deepEqual(firstError(res.json()).path, ['body', 'expires_at']);
      }
      // Well-formed, the same callers get their 403.
      assert.equal((await create(headers, { name: 'later', expires_at: now + 60 })).statusCode, 403, who);
    }
    // A bad credential is still 401 first.
    assert.equal((await create({ authorization: 'Bearer nope' }, { name: 'early', expires_at: 5 })).statusCode, 401);
  });

  test('name: 100 characters accepted, 101 and empty refused with their path', async () => {
    assert.equal((await create(as(s.owner.session, s.workspaceId), { name: 'n'.repeat(100) })).statusCode, 201);
    for (const name of ['n'.repeat(101), '']) {
      const res = await create(as(s.owner.session, s.workspaceId), { name });
      assert.equal(res.statusCode, 422);
      assert.deepEqual(firstError(res.json()).path, ['body', 'name']);
    }
    const missing = await create(as(s.owner.session, s.workspaceId), {});
    assert.deepEqual(firstError(missing.json()).path, ['body', 'name']);
    const wrongType = await create(as(s.owner.session, s.workspaceId), { name: 5 });
    assert.deepEqual(firstError(wrongType.json()).path, ['body', 'name']);
    const extra = await create(as(s.owner.session, s.workspaceId), { name: 'x', scope: 'all' });
    assert.deepEqual(firstError(extra.json()).path, ['body', 'scope']);
  });

  test('an expired token is rejected with 401', async () => {
    const now = Math.floor(h.clock.nowMs() / 1000);
    const t = (await create(as(s.owner.session, s.workspaceId), { name: 'short', expires_at: now + 10 })).json().token;
    assert.equal((await h.app.inject({ method: 'GET', url: '/v1/api_tokens', headers: as(t) })).statusCode, 200);
    h.clock.advanceSeconds(11);
    const res = await h.app.inject({ method: 'GET', url: '/v1/api_tokens', headers: as(t) });
    assert.equal(res.statusCode, 401);
    assert.equal(firstError(res.json()).code, 7010);
  });
});

describe('GET and DELETE /v1/api_tokens', () => {
  test('lists newest first with prefix, never the token or its hash, and pages with a cursor', async () => {
    const fresh = await h.seed('Lister');
    // Each token's plaintext by name ('seed' is the one h.seed made).
    const made = new Map<string, string>([['seed', fresh.apiToken]]);
    for (let i = 0; i < 5; i++) made.set(`t${i}`, (await create(as(fresh.owner.session, fresh.workspaceId), { name: `t${i}` })).json().token);
    /** What a listing must never hold of a token: the token, its secret part, its SHA-256 (as stored). */
    const forbidden: [string, string][] = [...made].flatMap(([name, tok]): [string, string][] => [
      [`${name}: the token`, tok],
      [`${name}: its secret part`, tok.slice('sk_svc_'.length, 39)],
      [`${name}: its SHA-256`, createHash('sha256').update(tok).digest('hex')],
    ]);
    const seen: string[] = [];
    const pages: string[] = [];
    let cursor: string | null = null;
    do {
      const url: string = `/v1/api_tokens?limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const res = await h.app.inject({ method: 'GET', url, headers: as(fresh.member.session, fresh.workspaceId) });
      assert.equal(res.statusCode, 200);
      pages.push(res.body);
      const body = res.json();
      assert.equal(body.has_more, body.next_cursor !== null);
      // sk_svc_ appears once per listed token: only as the start of its prefix.
      assert.equal(res.body.split('sk_svc_').length - 1, body.data.length, 'sk_svc_ only as the start of each prefix');
      for (const t of body.data) {
        assert.deepEqual(Object.keys(t).sort(), ['created_at', 'created_by', 'expires_at', 'id', 'last_used_at', 'name', 'prefix', 'scopes']);
        assert.equal(t.prefix.length, 12);
        // The prefix is the token's first 12 characters: sk_svc_ and 5 of the random part, no more.
        assert.equal(t.prefix, made.get(t.name)?.slice(0, 12), `${t.name}: prefix ${t.prefix}`);
        seen.push(t.name);
      }
      cursor = body.next_cursor;
    } while (cursor);
    assert.deepEqual(seen, ['t4', 't3', 't2', 't1', 't0', 'seed']);
    for (const [what, x] of forbidden) assert.ok(!pages.some((page) => page.includes(x)), `a listing holds ${what}`);
  });

  test('a cursor of another list, or tampered, is 422 on query.cursor', async () => {
    const other = await h.seed('Other');
    for (let i = 0; i < 3; i++) await create(as(other.owner.session, other.workspaceId), { name: `o${i}` });
    const page = (await h.app.inject({ method: 'GET', url: '/v1/api_tokens?limit=1', headers: as(other.apiToken) })).json();
    assert.ok(page.next_cursor);
    const foreign = await h.app.inject({ method: 'GET', url: `/v1/api_tokens?cursor=${page.next_cursor}`, headers: as(s.apiToken) });
    assert.equal(foreign.statusCode, 422);
    assert.deepEqual(firstError(foreign.json()).path, ['query', 'cursor']);
    const c: string = page.next_cursor;
    const tampered = c.slice(0, -2) + (c.endsWith('A') ? 'BB' : 'AA');
    const res = await h.app.inject({ method: 'GET', url: `/v1/api_tokens?cursor=${tampered}`, headers: as(other.apiToken) });
    assert.equal(res.statusCode, 422);
  });

  test('revocation takes effect on the very next request; another workspace sees 404 7002', async () => {
    const t = (await create(as(s.owner.session, s.workspaceId), { name: 'doomed' })).json();
    // It works until revoked (so the 401 below is the revocation's).
    assert.equal((await h.app.inject({ method: 'GET', url: '/v1/api_tokens', headers: as(t.token) })).statusCode, 200);
    const other = await h.seed('Stranger');
    const foreign = await h.app.inject({ method: 'DELETE', url: `/v1/api_tokens/${t.id}`, headers: as(other.owner.session, other.workspaceId) });
    assert.equal(foreign.statusCode, 404);
    assert.equal(firstError(foreign.json()).code, 7002);
    const bare = t.id.slice('tok_'.length);
    const del = await h.app.inject({ method: 'DELETE', url: `/v1/api_tokens/${bare}`, headers: as(s.admin.session, s.workspaceId) });
    assert.equal(del.statusCode, 204);
    assert.equal(del.body, '');
    const after = await h.app.inject({ method: 'GET', url: '/v1/api_tokens', headers: as(t.token) });
    assert.equal(after.statusCode, 401);
    const again = await h.app.inject({ method: 'DELETE', url: `/v1/api_tokens/${t.id}`, headers: as(s.admin.session, s.workspaceId) });
    assert.equal(again.statusCode, 404);
  });
});
