import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statementsWhile } from '../helpers/statements.js';
import { as } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { tokenStore } from '../../src/tokens/store.js';
import { notificationStore } from '../../src/notifications/store.js';
import { newId } from '../../src/shared/ids.js';
import { heldTagSourceChars } from '../../src/http/list-cache.js';
import { dashboardBody, dashboardsClient } from '../dashboards/fixtures.js';

/**
 * Versioned lists (issue 21, target 2): the API tokens of a workspace and the notifications of a
 * user answer a conditional read from the version the database bumps on every change of their
 * rows, without reading the page. Every kind of change moves the tag: a write through the API,
 * a credential's use (last_used_at), a row written by SQL outside the services, a delete.
 */
const h = useTestApp();
const s = h.seeded;

const get = (url: string, credential: string, headers: Record<string, string> = {}) => h.app.inject({ method: 'GET', url, headers: as(credential, undefined, headers) });

/** Counts the page reads a list makes while `fn` runs. */
async function pageReads<T>(store: { page: (...args: any[]) => Promise<unknown> }, fn: () => Promise<T>): Promise<{ result: T; reads: number }> {
  const original = store.page;
  let reads = 0;
  store.page = (...args: any[]) => {
    reads++;
    return original(...args);
  };
  try {
    return { result: await fn(), reads };
  } finally {
    store.page = original;
  }
}

const statements = <T>(fn: () => Promise<T>) => statementsWhile(h.database.db, fn);

test("a 200 of a versioned list: the version first (in the credential's own statement), then the page (which reads the version it was read at) unless this version was already written", async () => {
  await h.database.db
    .insertInto('notifications')
    .values({
      id: newId('ntf'),
      user_id: s.owner.userId,
      type: 'machine_expiry',
      resource_type: 'machine',
      resource_id: 'mch_1',
      title: 't',
      body: 'b',
      severity: 'info',
      context: '{}',
      read_at: null,
      created_at: 1,
      dedupe_key: null,
    })
    .execute();
  // Text of more bytes than characters: a kept answer is sent as its bytes, and says their number.
  const named = await h.app.inject({ method: 'POST', url: '/v1/api_tokens', headers: as(s.admin.session, s.workspaceId), payload: { name: 'naïve ☕ token' } });
  assert.equal(named.statusCode, 201, named.body);
  for (const [url, credential, list, credentialTable] of [
    ['/v1/api_tokens?limit=7', s.apiToken, 'api_tokens', 'api_tokens'],
    ['/v1/notifications?unread=true', s.owner.session, 'notifications', 'sessions'],
  ] as const) {
    // A credential whose use this minute is already written (its first use writes it, below).
    assert.equal((await get('/v1/me', credential)).statusCode, 200);
    const { result, sql } = await statements(() => get(url, credential));
    assert.equal(result.statusCode, 200, result.body);
    assert.equal(result.headers['content-length'], String(Buffer.byteLength(result.body)), url);
    const versionReads = sql.filter((q) => q.includes('list_versions'));
    assert.equal(versionReads.length, 2, `${url}: ${versionReads.join('\n')}`);
    assert.match(versionReads[0]!, new RegExp(`from "${credentialTable}" where "token_hash"`), `${url}: the version first, read with the credential`);
    assert.doesNotMatch(versionReads[0]!, /json/, `${url}: the credential's statement reads no page`);
    assert.equal(sql.filter((q) => q.includes('token_hash')).length, 1, `${url}: one credential statement`);
    assert.match(versionReads[1]!, new RegExp(`from "${list}"`), `${url}: then the page, with the version it was read at`);
    // The same version again: the answer written before, not a page read.
    const again = await statements(() => get(url, credential));
    assert.deepEqual(
      [again.result.statusCode, again.result.body, again.result.headers.etag, again.result.headers['content-type'], again.result.headers['content-length']],
      [200, result.body, result.headers.etag, result.headers['content-type'], String(Buffer.byteLength(result.body))],
    );
    assert.deepEqual(
      again.sql.filter((q) => q.includes(`from "${list}"`) && !q.includes('token_hash')),
      [],
      `${url}: no page read`,
    );
    // And the tag is the one a conditional read compares with.
    const conditional = await get(url, credential, { 'if-none-match': result.headers.etag as string });
    assert.equal(conditional.statusCode, 304, url);
  }
  // An empty page has no row to carry the version (SQLite reads it on its own then): its tag still holds.
  const empty = await get('/v1/notifications', s.member.session);
  assert.equal(empty.json().data.length, 0);
  assert.equal((await get('/v1/notifications', s.member.session, { 'if-none-match': empty.headers.etag as string })).statusCode, 304);
});

test("the credential's statement reads the version of its own list only: a use written by this request, another workspace's list, a route of no list of its own each read it on their own", async () => {
  const ws = await h.seed('Alongside');
  const versionAlone = (sql: string[]) => sql.filter((q) => q.includes('list_versions') && !q.includes('token_hash') && !q.includes('json')).length;
  const credentialWithVersion = (sql: string[]) => sql.filter((q) => q.includes('token_hash') && q.includes('list_versions')).length;

  // A token made now, its list read (and kept) before its first use.
  const made = await h.app.inject({ method: 'POST', url: '/v1/api_tokens', headers: as(ws.owner.session, ws.workspaceId), payload: { name: 'fresh' } });
  assert.equal(made.statusCode, 201, made.body);
  const token = made.json().token as string;
  const listed = await get('/v1/api_tokens', ws.owner.session, { 'service-context': ws.workspaceId });
  const unused = (listed.json().data as { id: string; last_used_at: number | null }[]).find((t) => t.id === made.json().id)!;
  assert.equal(unused.last_used_at, null);
  // Its first use writes last_used_at, which bumps the list after the credential's statement read
  // its version: that version is the list's past, so the version is read again after the write,
  // and the answer shows the use (the page kept at the older version would not).
  const first = await statements(() => get('/v1/api_tokens', token));
  assert.equal(first.result.statusCode, 200, first.result.body);
  const shown = (first.result.json().data as { id: string; last_used_at: number | null }[]).find((t) => t.id === made.json().id)!;
  assert.equal(shown.last_used_at, Math.floor(h.clock.nowMs() / 1000));
  assert.notEqual(first.result.headers.etag, listed.headers.etag);
  assert.equal(versionAlone(first.sql), 1, first.sql.join('\n'));
  // Within the minute, the credential's statement is the only version read; a minute on, a use
  // is written again and the version is read after it.
  const warm = await statements(() => get('/v1/api_tokens', token, { 'if-none-match': first.result.headers.etag as string }));
  assert.deepEqual([warm.result.statusCode, credentialWithVersion(warm.sql), versionAlone(warm.sql)], [304, 1, 0], warm.sql.join('\n'));
  h.clock.advanceSeconds(61);
  const later = await statements(() => get('/v1/api_tokens', token, { 'if-none-match': first.result.headers.etag as string }));
  assert.deepEqual([later.result.statusCode, versionAlone(later.sql)], [200, 1], later.sql.join('\n'));

  // A session reads a workspace's list by Service-Context: its statement knows its user, not that
  // workspace, so the version is read on its own.
  assert.equal((await get('/v1/me', ws.owner.session)).statusCode, 200);
  const bySession = await statements(() => get('/v1/api_tokens', ws.owner.session, { 'service-context': ws.workspaceId }));
  assert.deepEqual([bySession.result.statusCode, credentialWithVersion(bySession.sql), versionAlone(bySession.sql)], [200, 0, 1], bySession.sql.join('\n'));
  // A session's own list (notifications) is read with the session (a page with a row: an empty
  // one has no row to carry the page's own version on SQLite, which reads it apart then).
  await h.database.db
    .insertInto('notifications')
    .values({
      id: newId('ntf'),
      user_id: ws.owner.userId,
      type: 'machine_expiry',
      resource_type: 'machine',
      resource_id: 'mch_1',
      title: 't',
      body: 'b',
      severity: 'info',
      context: '{}',
      read_at: null,
      created_at: 1,
      dedupe_key: null,
    })
    .execute();
  const own = await statements(() => get('/v1/notifications', ws.owner.session));
  assert.deepEqual([own.result.statusCode, credentialWithVersion(own.sql), versionAlone(own.sql)], [200, 1, 0], own.sql.join('\n'));
  // Its use written a minute on (which could change what a user's list shows), the version is read after it.
  h.clock.advanceSeconds(61);
  const ownLater = await statements(() => get('/v1/notifications', ws.owner.session));
  assert.deepEqual([ownLater.result.statusCode, versionAlone(ownLater.sql)], [200, 1], ownLater.sql.join('\n'));
  // A GET of no list of the credential's own reads none with it.
  for (const [url, credential] of [
    ['/v1/secrets', token],
    ['/v1/me', ws.owner.session],
  ] as const) {
    const other = await statements(() => get(url, credential));
    assert.equal(other.result.statusCode, 200, other.result.body);
    assert.equal(credentialWithVersion(other.sql), 0, `${url}: ${other.sql.join('\n')}`);
  }
});

test("a kept answer is the list as it is: every change is read again; each page, filter and workspace is its own; the credential and the caller's rights are checked first, every time", async () => {
  const other = await h.seed('Kept');
  const names = async (url: string, credential: string) => {
    const res = await get(url, credential);
    assert.equal(res.statusCode, 200, res.body);
    return (res.json().data as { name: string }[]).map((t) => t.name);
  };
  const made = await h.app.inject({ method: 'POST', url: '/v1/api_tokens', headers: as(other.owner.session, other.workspaceId), payload: { name: 'first' } });
  assert.equal(made.statusCode, 201, made.body);
  const token = made.json().token as string;
  const before = await names('/v1/api_tokens', token);
  assert.deepEqual(await names('/v1/api_tokens', token), before, 'kept');
  // A change made by SQL outside the services is shown on the next read.
  await h.database.db.updateTable('api_tokens').set({ name: 'renamed by sql' }).where('id', '=', other.apiTokenId).execute();
  const after = await names('/v1/api_tokens', token);
  assert.ok(after.includes('renamed by sql'), after.join());
  assert.equal((await names('/v1/api_tokens?limit=1', token)).length, 1, 'another limit is another answer');
  assert.equal((await names('/v1/api_tokens', token)).length, after.length);
  // This workspace's list, read the same way, is its own.
  const mine = await names('/v1/api_tokens', s.apiToken);
  assert.ok(!mine.includes('renamed by sql'));
  // A caller who may not read the other workspace's list is refused before any kept answer.
  const outsider = await get('/v1/api_tokens', s.owner.session, { 'service-context': other.workspaceId });
  assert.equal(outsider.statusCode, 403, outsider.body);
  // Revoked, the token is refused on its very next request, whatever was kept for its list.
  const revoked = await h.app.inject({ method: 'DELETE', url: `/v1/api_tokens/${made.json().id}`, headers: as(other.owner.session, other.workspaceId) });
  assert.equal(revoked.statusCode, 204);
  assert.equal((await get('/v1/api_tokens', token)).statusCode, 401);
});

test('api_tokens: a 304 reads the version, not the page; each change of the list (API, SQL, use, revoke) is a new tag', async () => {
  const first = await get('/v1/api_tokens', s.owner.session, { 'service-context': s.workspaceId });
  assert.equal(first.statusCode, 200);
  const tag = first.headers.etag as string;
  assert.match(tag, /^W\/"[A-Za-z0-9_-]{27}"$/);
  const again = await pageReads(tokenStore, () => get('/v1/api_tokens', s.owner.session, { 'service-context': s.workspaceId, 'if-none-match': tag }));
  assert.deepEqual([again.result.statusCode, again.result.body, again.result.headers.etag, again.result.headers['content-length'], again.reads], [304, '', tag, undefined, 0]);

  const unchanged = async (t: string) => (await get('/v1/api_tokens', s.owner.session, { 'service-context': s.workspaceId, 'if-none-match': t })).statusCode === 304;
  const currentTag = async () => (await get('/v1/api_tokens', s.owner.session, { 'service-context': s.workspaceId })).headers.etag as string;

  // Through the API.
  const made = await h.app.inject({ method: 'POST', url: '/v1/api_tokens', headers: as(s.owner.session, s.workspaceId), payload: { name: 'ci' } });
  assert.equal(made.statusCode, 201, made.body);
  assert.equal(await unchanged(tag), false, 'a new token');
  let t = await currentTag();
  // Its first use stamps last_used_at, which the list shows.
  assert.equal((await get('/v1/secrets', made.json().token)).statusCode, 200);
  assert.equal(await unchanged(t), false, 'a token used');
  t = await currentTag();
  // A row written by SQL, not through the service.
  await h.database.db.updateTable('api_tokens').set({ name: 'renamed' }).where('id', '=', made.json().id).execute();
  assert.equal(await unchanged(t), false, 'an update outside the services');
  t = await currentTag();
  assert.equal((await h.app.inject({ method: 'DELETE', url: `/v1/api_tokens/${made.json().id}`, headers: as(s.owner.session, s.workspaceId) })).statusCode, 204);
  assert.equal(await unchanged(t), false, 'a revoked token');
  t = await currentTag();
  assert.equal(await unchanged(t), true);
});

test('api_tokens: the tag is per page and per workspace; another workspace never gets this one’s 304', async () => {
  const other = await h.seed('Versions');
  const mine = await get('/v1/api_tokens?limit=1', s.owner.session, { 'service-context': s.workspaceId });
  const page2 = await get('/v1/api_tokens?limit=2', s.owner.session, { 'service-context': s.workspaceId });
  assert.notEqual(mine.headers.etag, page2.headers.etag, 'another limit is another answer');
  const theirs = await get('/v1/api_tokens?limit=1', other.owner.session, { 'service-context': other.workspaceId, 'if-none-match': mine.headers.etag as string });
  assert.equal(theirs.statusCode, 200);
  assert.equal(theirs.json().data[0].id, other.apiTokenId);
  // A token created in the other workspace leaves this one's tag as it was.
  await h.app.inject({ method: 'POST', url: '/v1/api_tokens', headers: as(other.owner.session, other.workspaceId), payload: { name: 'theirs' } });
  assert.equal((await get('/v1/api_tokens?limit=1', s.owner.session, { 'service-context': s.workspaceId, 'if-none-match': mine.headers.etag as string })).statusCode, 304);
});

test('notifications: a 304 reads no page; a new one, one marked read and one deleted are each a new tag; another user gets 200', async () => {
  const user = s.member.userId;
  const insert = (id = newId('ntf')) =>
    h.database.db
      .insertInto('notifications')
      .values({
        id,
        user_id: user,
        type: 'machine_expiry',
        resource_type: 'machine',
        resource_id: 'mch_1',
        title: 't',
        body: 'b',
        severity: 'info',
        context: '{}',
        read_at: null,
        created_at: 1,
        dedupe_key: null,
      })
      .execute()
      .then(() => id);
  const id = await insert();
  const first = await get('/v1/notifications', s.member.session);
  const tag = first.headers.etag as string;
  const again = await pageReads(notificationStore, () => get('/v1/notifications', s.member.session, { 'if-none-match': tag }));
  assert.deepEqual([again.result.statusCode, again.reads], [304, 0]);
  const unread = (await get('/v1/notifications?unread=true', s.member.session)).headers.etag as string;
  assert.notEqual(unread, tag, 'the unread filter is another answer');

  assert.equal((await h.app.inject({ method: 'PATCH', url: `/v1/notifications/${id}/read`, headers: as(s.member.session) })).statusCode, 204);
  assert.equal((await get('/v1/notifications', s.member.session, { 'if-none-match': tag })).statusCode, 200, 'marked read');
  const t2 = (await get('/v1/notifications', s.member.session)).headers.etag as string;
  await insert();
  assert.equal((await get('/v1/notifications', s.member.session, { 'if-none-match': t2 })).statusCode, 200, 'a new one');
  const t3 = (await get('/v1/notifications', s.member.session)).headers.etag as string;
  await h.database.db.deleteFrom('notifications').where('id', '=', id).execute();
  assert.equal((await get('/v1/notifications', s.member.session, { 'if-none-match': t3 })).statusCode, 200, 'one deleted');

  const owner = await get('/v1/notifications', s.owner.session, { 'if-none-match': tag });
  assert.equal(owner.statusCode, 200, "another user's list");
});

test('the tags kept are bounded by what they are made of, whatever the URLs callers send, and a tag made again is the same', async () => {
  const url = (zeros: number) => `/v1/api_tokens?limit=${'0'.repeat(zeros)}5`;
  const first = await get(url(1), s.apiToken);
  assert.equal(first.statusCode, 200, first.body);
  // Long URLs of the same page (a limit of 5 written with thousands of zeros), past the bound.
  for (let i = 0; i < 150; i++) {
    const res = await get(url(9_000 + i), s.apiToken);
    assert.equal(res.statusCode, 200);
    assert.ok(heldTagSourceChars() <= 1_000_000, `held ${heldTagSourceChars()}`);
  }
  const again = await get(url(1), s.apiToken);
  assert.deepEqual([again.statusCode, again.headers.etag], [200, first.headers.etag]);
});

test("a dashboard's revisions read with an API token: both lists' versions in the credential's statement, none apart; a session's read them on its own; a new revision or a changed snippet is a new tag at once", async () => {
  const token = dashboardsClient(h, s, s.apiToken);
  const versionAlone = (sql: string[]) => sql.filter((q) => q.includes('list_versions') && !q.includes('token_hash')).length;
  const credentialWithVersions = (sql: string[]) => sql.filter((q) => q.includes('token_hash') && (q.match(/list_versions/g) ?? []).length === 2).length;
  const made = await token.create(dashboardBody({ name: 'Alongside' }));
  assert.equal(made.statusCode, 201, made.body);
  const dash = made.json<{ id: string; etag: string }>();
  // The token's use is written once a minute: within it the credential's statement alone reads the versions.
  await token.revisions(dash.id);
  const first = await statements(() => token.revisions(dash.id));
  assert.equal(first.result.statusCode, 200, first.result.body);
  assert.deepEqual([credentialWithVersions(first.sql), versionAlone(first.sql)], [1, 0], first.sql.join('\n'));
  const tag = first.result.headers.etag as string;
  const again = await statements(() => token.revisions(dash.id, '', { 'if-none-match': tag }));
  assert.deepEqual([again.result.statusCode, credentialWithVersions(again.sql), versionAlone(again.sql)], [304, 1, 0], again.sql.join('\n'));

  // A session names a workspace by Service-Context, not in its statement: the versions are read apart, to the same tag.
  const bySession = await statements(() => dashboardsClient(h, s).revisions(dash.id, '', { 'if-none-match': tag }));
  assert.deepEqual([bySession.result.statusCode, credentialWithVersions(bySession.sql), versionAlone(bySession.sql)], [304, 0, 1], bySession.sql.join('\n'));

  // Each list moves the tag on the very next read: the dashboard's revisions, then the workspace's snippets.
  const patched = await token.patch(dash.id, dash.etag, { name: 'Alongside 2' });
  assert.equal(patched.statusCode, 200, patched.body);
  const afterRevision = await token.revisions(dash.id, '', { 'if-none-match': tag });
  assert.equal(afterRevision.statusCode, 200);
  assert.equal(afterRevision.json<{ data: { name: string }[] }>().data[0]!.name, 'Alongside 2');
  const tag2 = afterRevision.headers.etag as string;
  assert.notEqual(tag2, tag);
  assert.equal((await token.createSnippet({ name: 'Alongside', source: 'select 1' })).statusCode, 201);
  const afterSnippet = await token.revisions(dash.id, '', { 'if-none-match': tag2 });
  assert.equal(afterSnippet.statusCode, 200);
  assert.notEqual(afterSnippet.headers.etag, tag2);
});
