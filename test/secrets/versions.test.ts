import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { as, firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { secretClient, type Version } from './secret-client.js';
import { withPipelineStatuses } from '../helpers/openapi.js';

let api: ReturnType<typeof secretClient>;
let stranger: ReturnType<typeof secretClient>;
/** Destroying a version is an owner's or an admin's (docs/spec-gaps.md, "Roles (issue 50)"); the rest is any member's. */
let admin: ReturnType<typeof secretClient>;
const by = (action: 'enable' | 'disable' | 'destroy') => (action === 'destroy' ? admin : api);
const h = useTestApp({
  setup: async () => {
    const other = await h.seed('Other');
    api = secretClient(h, as(s.member.session, s.workspaceId));
    admin = secretClient(h, as(s.admin.session, s.workspaceId));
    stranger = secretClient(h, as(other.apiToken));
  },
});
const s = h.seeded;

const now = () => Math.floor(h.clock.nowMs() / 1000);

describe('POST /v1/secrets/{id}/versions', () => {
  test('201 with the version (enabled, numbered 1, 2, ...), never the payload; comment omitted when unset', async () => {
    const secret = await api.createSecret();
    const res = await api.call('POST', `/secrets/${secret.id}/versions`, { data: Buffer.from('hunter2').toString('base64') });
    assert.equal(res.statusCode, 201);
    const v1 = res.json();
    assert.deepEqual(Object.keys(v1).sort(), ['created_at', 'etag', 'id', 'secret_id', 'state', 'version_number']);
    assert.match(v1.id, /^secv_[0-9a-z]{26}$/);
    assert.equal(v1.secret_id, secret.id);
    assert.equal(v1.version_number, 1);
    assert.equal(v1.state, 'enabled');
    assert.equal(v1.created_at, now());
    assert.equal(res.headers.etag, `"${v1.etag}"`);
    assert.ok(!res.body.includes(Buffer.from('hunter2').toString('base64')));
    const v2 = await api.addVersion(secret.id.slice(4), Buffer.from('second'), 'rotated by ops');
    assert.equal(v2.version_number, 2);
    assert.equal(v2.comment, 'rotated by ops');
    assert.equal((await api.addVersion(secret.id, Buffer.from('third'))).version_number, 3);
  });

  test('data: malformed base64 is 422 on body.data, never silently decoded', async () => {
    const secret = await api.createSecret();
    for (const data of ['abc', 'ab=c', '!!!!', 'YWJj\n', 'YWJ j', '-_-_', 'YQ', 'YQ=', 'YQ===', '====', 'Y===', ' YWJj']) {
      const res = await api.call('POST', `/secrets/${secret.id}/versions`, { data });
      assert.equal(res.statusCode, 422, JSON.stringify(data));
      assert.equal(firstError(res.json()).code, 7003);
      assert.deepEqual(firstError(res.json()).path, ['body', 'data'], JSON.stringify(data));
    }
    for (const data of [7, null, ['YWJj'], { b64: 'YWJj' }]) {
      const res = await api.call('POST', `/secrets/${secret.id}/versions`, { data });
      assert.equal(res.statusCode, 422);
      assert.deepEqual(firstError(res.json()).path, ['body', 'data']);
    }
    const missing = await api.call('POST', `/secrets/${secret.id}/versions`, { comment: 'no data' });
    assert.deepEqual(firstError(missing.json()).path, ['body', 'data']);
    const empty = await api.call('POST', `/secrets/${secret.id}/versions`, { data: '' });
    assert.equal(empty.statusCode, 422);
    assert.deepEqual(firstError(empty.json()).path, ['body', 'data']);
    const extra = await api.call('POST', `/secrets/${secret.id}/versions`, { data: 'YWJj', state: 'disabled' });
    assert.deepEqual(firstError(extra.json()).path, ['body', 'state']);
  });

  test('data: 65,536 decoded bytes are accepted, 65,537 and more are 422 on body.data', async () => {
    const secret = await api.createSecret();
    const max = randomBytes(65536);
    const v = await api.addVersion(secret.id, max);
    assert.equal((await api.access(secret.id, v.id)).json().data, max.toString('base64'));
    // 65,537 and 65,538 bytes encode to as many characters as 65,536: the decoded size decides.
    for (const size of [65537, 65538, 65539, 70000]) {
      const res = await api.call('POST', `/secrets/${secret.id}/versions`, { data: randomBytes(size).toString('base64') });
      assert.equal(res.statusCode, 422, String(size));
      assert.deepEqual(firstError(res.json()).path, ['body', 'data']);
    }
    const versions = (await api.call('GET', `/secrets/${secret.id}/versions`)).json().data;
    assert.equal(versions.length, 1, 'refused payloads made no version');
  });

  test('order of checks: malformed, empty or oversized data is 422 before the 403 of a foreign Service-Context and the 404 of an unknown secret', async () => {
    const secret = await api.createSecret();
    const other = await h.seed('Elsewhere');
    const foreign: [string, Record<string, string>][] = [
      ['a workspace API token naming another workspace', as(other.apiToken, s.workspaceId)],
      ['a session naming a workspace not its own', as(other.owner.session, s.workspaceId)],
      ['a session without Service-Context', as(s.member.session)],
    ];
    const malformed = ['abc', 'YQ', '', randomBytes(65537).toString('base64')];
    for (const [who, headers] of foreign) {
      for (const data of malformed) {
        const res = await h.app.inject({ method: 'POST', url: `/v1/secrets/${secret.id}/versions`, headers, payload: { data } });
        assert.equal(res.statusCode, 422, `${who}, ${data.length} characters: ${res.body.slice(0, 300)}`);
        assert.deepEqual(firstError(res.json()).path, ['body', 'data']);
      }
      const wellFormed = await h.app.inject({ method: 'POST', url: `/v1/secrets/${secret.id}/versions`, headers, payload: { data: 'YWJj' } });
      assert.equal(wellFormed.statusCode, 403, who);
    }
    const unknown = await api.call('POST', '/secrets/sec_00000000000000000000000000/versions', { data: 'YQ' });
    assert.equal(unknown.statusCode, 422);
    assert.equal((await api.call('POST', '/secrets/sec_00000000000000000000000000/versions', { data: 'YWJj' })).statusCode, 404);
  });

  test('the decoded size is exact: the messages name the bytes; 65,536 and 65,537 bytes have the same base64 length', async () => {
    const secret = await api.createSecret();
    assert.equal(randomBytes(65536).toString('base64').length, randomBytes(65537).toString('base64').length);
    const over = await api.call('POST', `/secrets/${secret.id}/versions`, { data: randomBytes(65537).toString('base64') });
    assert.match(firstError(over.json()).message, /^data decodes to 65537 bytes; at most 65536 are allowed$/);
    const empty = await api.call('POST', `/secrets/${secret.id}/versions`, { data: '' });
    assert.match(firstError(empty.json()).message, /^data must not be empty$/);
    const bad = await api.call('POST', `/secrets/${secret.id}/versions`, { data: 'YQ' });
    assert.match(firstError(bad.json()).message, /^data must be padded standard base64/);
  });

  test('comment: 200 characters accepted, 201 refused on body.comment', async () => {
    const secret = await api.createSecret();
    const ok = await api.addVersion(secret.id, Buffer.from('x'), 'é'.repeat(200));
    assert.equal(ok.comment, 'é'.repeat(200));
    const res = await api.call('POST', `/secrets/${secret.id}/versions`, { data: 'eA==', comment: 'c'.repeat(201) });
    assert.equal(res.statusCode, 422);
    assert.deepEqual(firstError(res.json()).path, ['body', 'comment']);
  });

  test("another workspace's secret or an unknown one is 404 7002 on path.id", async () => {
    const secret = await api.createSecret();
    for (const res of [await stranger.call('POST', `/secrets/${secret.id}/versions`, { data: 'eA==' }), await api.call('POST', '/secrets/sec_00000000000000000000000000/versions', { data: 'eA==' })]) {
      assert.equal(res.statusCode, 404);
      assert.equal(firstError(res.json()).code, 7002);
      assert.deepEqual(firstError(res.json()).path, ['path', 'id']);
    }
  });
});

describe('GET versions, a version, and :access', () => {
  test('lists newest first, page by page, destroyed versions included', async () => {
    const secret = await api.createSecret();
    const made: Version[] = [];
    for (let i = 0; i < 5; i++) made.push(await api.addVersion(secret.id, Buffer.from(`v${i}`)));
    await admin.transition(secret.id, made[1]!.id, 'destroy', made[1]!.etag);
    const seen: Version[] = [];
    let cursor: string | null = null;
    do {
      const res = await api.call('GET', `/secrets/${secret.id}/versions?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.equal(body.has_more, body.next_cursor !== null);
      seen.push(...body.data);
      cursor = body.next_cursor;
    } while (cursor);
    assert.deepEqual(
      seen.map((v) => v.version_number),
      [5, 4, 3, 2, 1],
    );
    assert.equal(seen[3]!.state, 'destroyed');
    assert.equal(seen[3]!.destroyed_at, now());
    assert.equal(seen[0]!.destroyed_at, undefined);
    const foreign = await stranger.call('GET', `/secrets/${secret.id}/versions`);
    assert.equal(foreign.statusCode, 404);
    assert.equal(firstError(foreign.json()).code, 7002);
  });

  test("a version cursor is bound to its secret's list", async () => {
    const a = await api.createSecret();
    const b = await api.createSecret();
    for (let i = 0; i < 3; i++) await api.addVersion(a.id, Buffer.from('x'));
    const page = (await api.call('GET', `/secrets/${a.id}/versions?limit=1`)).json();
    const res = await api.call('GET', `/secrets/${b.id}/versions?cursor=${page.next_cursor}`);
    assert.equal(res.statusCode, 422);
    assert.deepEqual(firstError(res.json()).path, ['query', 'cursor']);
  });

  test('get by canonical or bare ids, with the ETag; a version of another secret or workspace is 404 on path.vid', async () => {
    const secret = await api.createSecret();
    const sibling = await api.createSecret();
    const v = await api.addVersion(secret.id, Buffer.from('x'));
    const res = await api.call('GET', `/secrets/${secret.id.slice(4)}/versions/${v.id.slice(5)}`);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), v);
    assert.equal(res.headers.etag, `"${v.etag}"`);
    for (const r of [
      await api.call('GET', `/secrets/${sibling.id}/versions/${v.id}`),
      await api.access(sibling.id, v.id),
      await api.transition(sibling.id, v.id, 'disable', '*'),
      await api.call('GET', `/secrets/${secret.id}/versions/secv_00000000000000000000000000`),
    ]) {
      assert.equal(r.statusCode, 404);
      assert.equal(firstError(r.json()).code, 7002);
      assert.deepEqual(firstError(r.json()).path, ['path', 'vid']);
    }
    for (const r of [await stranger.call('GET', `/secrets/${secret.id}/versions/${v.id}`), await stranger.access(secret.id, v.id), await stranger.transition(secret.id, v.id, 'destroy', '*')]) {
      assert.equal(r.statusCode, 404);
      assert.equal(firstError(r.json()).code, 7002);
    }
    assert.equal((await api.getVersion(secret.id, v.id)).state, 'enabled', 'the foreign destroy did nothing');
  });

  test('path ids over the spec lengths are 422 (secret 54, version 55)', async () => {
    const secret = await api.createSecret();
    for (const [url, path] of [
      [`/secrets/${secret.id}/versions/${'v'.repeat(56)}`, ['path', 'vid']],
      [`/secrets/${secret.id}/versions/${'v'.repeat(56)}:access`, ['path', 'vid']],
      [`/secrets/${'s'.repeat(55)}/versions/secv_x`, ['path', 'id']],
    ] as const) {
      const res = await api.call('GET', url);
      assert.equal(res.statusCode, 422, url);
      assert.deepEqual(firstError(res.json()).path, path);
    }
    const longVid = await api.call('POST', `/secrets/${secret.id}/versions/${'v'.repeat(56)}:enable`, undefined, { 'if-match': '*' });
    assert.equal(longVid.statusCode, 422);
    assert.equal((await api.call('GET', `/secrets/${secret.id}/versions/${'v'.repeat(55)}`)).statusCode, 404);
  });

  test(':access answers {id, data} for an enabled version only (409 7201 with the state otherwise)', async () => {
    const secret = await api.createSecret();
    const payload = randomBytes(300);
    const v = await api.addVersion(secret.id, payload);
    const res = await api.access(secret.id.slice(4), v.id.slice(5));
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { id: v.id, data: payload.toString('base64') });
    assert.equal(res.headers['cache-control'], 'no-store');
    const disabled = (await api.transition(secret.id, v.id, 'disable', v.etag)).json();
    const denied = await api.access(secret.id, v.id);
    assert.equal(denied.statusCode, 409);
    assert.equal(firstError(denied.json()).code, 7201);
    assert.deepEqual(firstError(denied.json()).metadata, { state: 'disabled' });
    await admin.transition(secret.id, v.id, 'destroy', disabled.etag);
    const destroyed = await api.access(secret.id, v.id);
    assert.equal(destroyed.statusCode, 409);
    assert.deepEqual(firstError(destroyed.json()).metadata, { state: 'destroyed' });
  });
});

describe('version transitions: :enable (the spec), :disable, :destroy', () => {
  async function fresh() {
    const secret = await api.createSecret();
    return { secret, v: await api.addVersion(secret.id, Buffer.from('payload')) };
  }

  test("the spec's enable: a disabled version with the current etag becomes enabled and is answered", async () => {
    const { secret, v } = await fresh();
    const disabled = await api.transition(secret.id, v.id, 'disable', `"${v.etag}"`);
    assert.equal(disabled.statusCode, 200);
    const d = disabled.json();
    assert.equal(d.state, 'disabled');
    assert.notEqual(d.etag, v.etag);
    const res = await api.call('POST', `/secrets/${secret.id}/versions/${v.id}:enable`, undefined, { 'if-match': `"${d.etag}"` });
    assert.equal(res.statusCode, 200);
    const e = res.json();
    assert.deepEqual({ ...e, etag: 'x' }, { ...v, etag: 'x' });
    assert.notEqual(e.etag, d.etag);
    assert.equal(res.headers.etag, `"${e.etag}"`);
    assert.deepEqual(await api.getVersion(secret.id, v.id), e);
    assert.equal((await api.access(secret.id, v.id)).statusCode, 200);
  });

  test('enable of an enabled version and disable of a disabled one succeed without change (same etag)', async () => {
    const { secret, v } = await fresh();
    const again = await api.transition(secret.id, v.id, 'enable', v.etag);
    assert.equal(again.statusCode, 200);
    assert.deepEqual(again.json(), v);
    const d = (await api.transition(secret.id, v.id, 'disable', v.etag)).json();
    for (let i = 0; i < 2; i++) {
      const res = await api.transition(secret.id, v.id, 'disable', d.etag);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), d);
    }
  });

  test('destroy wipes the payload and sets destroyed_at, from enabled and from disabled; again is a no-op', async () => {
    for (const from of ['enabled', 'disabled'] as const) {
      const { secret, v } = await fresh();
      const etag = from === 'enabled' ? v.etag : (await api.transition(secret.id, v.id, 'disable', v.etag)).json().etag;
      h.clock.advanceSeconds(5);
      const res = await admin.transition(secret.id, v.id, 'destroy', etag);
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.equal(body.state, 'destroyed');
      assert.equal(body.destroyed_at, now());
      assert.equal(body.created_at, v.created_at);
      assert.notEqual(body.etag, etag);
      const row = await h.database.db.selectFrom('secret_versions').select(['ciphertext', 'destroyed_at']).where('id', '=', v.id).executeTakeFirstOrThrow();
      assert.deepEqual(row, { ciphertext: null, destroyed_at: body.destroyed_at });
      h.clock.advanceSeconds(5);
      const again = await admin.transition(secret.id, v.id, 'destroy', body.etag);
      assert.equal(again.statusCode, 200);
      assert.deepEqual(again.json(), body);
    }
  });

  test('destroyed is final: enable and disable are 409 7202', async () => {
    const { secret, v } = await fresh();
    const destroyed = (await admin.transition(secret.id, v.id, 'destroy', v.etag)).json();
    for (const action of ['enable', 'disable'] as const) {
      for (const ifMatch of [destroyed.etag, '*']) {
        const res = await by(action).transition(secret.id, v.id, action, ifMatch);
        assert.equal(res.statusCode, 409);
        assert.equal(firstError(res.json()).code, 7202);
      }
    }
    assert.deepEqual(await api.getVersion(secret.id, v.id), destroyed);
  });

  test('If-Match: missing is 422 on headers.if-match; over 256 characters 422; quoted, weak and * accepted', async () => {
    const { secret, v } = await fresh();
    for (const action of ['enable', 'disable', 'destroy'] as const) {
      const res = await by(action).transition(secret.id, v.id, action);
      assert.equal(res.statusCode, 422, action);
      assert.deepEqual(firstError(res.json()).path, ['headers', 'if-match']);
      const long = await by(action).transition(secret.id, v.id, action, 'e'.repeat(257));
      assert.equal(long.statusCode, 422);
    }
    assert.equal((await api.getVersion(secret.id, v.id)).etag, v.etag, 'nothing changed');
    const d = (await api.transition(secret.id, v.id, 'disable', `W/"${v.etag}"`)).json();
    assert.equal(d.state, 'disabled');
    assert.equal((await api.transition(secret.id, v.id, 'enable', '*')).json().state, 'enabled');
  });

  test('a stale If-Match is 409 7030 with metadata.current_etag, even where nothing would change', async () => {
    const { secret, v } = await fresh();
    const d = (await api.transition(secret.id, v.id, 'disable', v.etag)).json();
    for (const action of ['enable', 'disable', 'destroy'] as const) {
      const res = await by(action).transition(secret.id, v.id, action, v.etag);
      assert.equal(res.statusCode, 409, action);
      assert.equal(firstError(res.json()).code, 7030);
      assert.deepEqual(firstError(res.json()).metadata, { current_etag: d.etag });
    }
    assert.deepEqual(await api.getVersion(secret.id, v.id), d);
    // Existence comes before the etag: an unknown version is 404 whatever If-Match says.
    const unknown = await api.transition(secret.id, 'secv_00000000000000000000000000', 'enable', 'stale');
    assert.equal(unknown.statusCode, 404);
  });

  test('an Idempotency-Key retry replays the first answer instead of a 409', async () => {
    const { secret, v } = await fresh();
    const headers = { 'if-match': v.etag, 'idempotency-key': `k-${randomBytes(4).toString('hex')}` };
    const url = `/secrets/${secret.id}/versions/${v.id}:disable`;
    const first = await api.call('POST', url, undefined, headers);
    const retry = await api.call('POST', url, undefined, headers);
    assert.equal(first.statusCode, 200);
    assert.equal(retry.statusCode, 200);
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    assert.deepEqual(retry.json(), first.json());
  });

  test('an unknown custom method is not a route', async () => {
    const { secret, v } = await fresh();
    const res = await api.call('POST', `/secrets/${secret.id}/versions/${v.id}:rotate`, undefined, { 'if-match': '*' });
    assert.ok([404, 405].includes(res.statusCode));
    assert.ok([7000, 7001].includes(firstError(res.json()).code));
  });
});

describe('OpenAPI', () => {
  test('the custom methods are documented at their colon paths with If-Match required and every error status', () => {
    const doc = h.app.swagger() as unknown as {
      paths: Record<string, Record<string, { parameters: { in: string; name: string; required?: boolean }[]; responses: Record<string, unknown> }>>;
    };
    for (const action of ['enable', 'disable', 'destroy']) {
      const op = doc.paths[`/v1/secrets/{id}/versions/{vid}:${action}`]?.post;
      assert.ok(op, action);
      assert.ok(op.parameters.some((p) => p.in === 'header' && p.name === 'if-match' && p.required === true));
      assert.ok(op.parameters.some((p) => p.in === 'header' && p.name === 'idempotency-key' && !p.required));
      assert.deepEqual(Object.keys(op.responses).sort(), withPipelineStatuses('post', ['200', '401', '403', '404', '409', '422']));
    }
    const access = doc.paths['/v1/secrets/{id}/versions/{vid}:access']?.get;
    assert.deepEqual(Object.keys(access!.responses).sort(), withPipelineStatuses('get', ['200', '401', '403', '404', '409', '422', '500']));
    assert.ok(doc.paths['/v1/secrets/{id}']?.delete?.parameters.some((p) => p.name === 'if-match' && p.required === true));
  });
});
