import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PROPERTY_SEED } from '../helpers/property.js';
import { type TestApp } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { assertConforms } from '../dashboards/fixtures.js';
import { TokenList } from '../../src/tokens/schemas.js';
import { NotificationList } from '../../src/notifications/schemas.js';
import { toNotification } from '../../src/notifications/representation.js';
import { TOKEN_SCOPES } from '../../src/auth/scope-schemas.js';
import { newId } from '../../src/shared/ids.js';
import { PreSerialized } from '../../src/shared/pre-serialized.js';

/**
 * The lists clients read most are written as JSON by the database (src/db/json-rows.ts) and sent
 * without a serializer: each answer must be exactly what the rows hold, shaped as the response
 * schema says, whatever the text (quotes, backslashes, control characters, any plane of
 * Unicode), the numbers and the nulls. Checked against the rows read back and against the schema.
 */
const h = useTestApp();
const s = h.seeded;

const text = fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).filter((t) => !t.includes('\0'));
const seconds = fc.integer({ min: 0, max: 2 ** 40 });

async function readAll(path: string, headers: Record<string, string>): Promise<unknown[]> {
  const items: unknown[] = [];
  let cursor: string | null = null;
  do {
    const res: Awaited<ReturnType<TestApp['app']['inject']>> = await h.app.inject({
      method: 'GET',
      url: `${path}${path.includes('?') ? '&' : '?'}limit=7${cursor ? `&cursor=${cursor}` : ''}`,
      headers,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    const page = res.json();
    assertConforms(path.startsWith('/v1/api_tokens') ? TokenList : NotificationList, page);
    items.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return items;
}

test('api_tokens pages: every token as its row says, scopes from the stored words (all of them when none were given)', async () => {
  const db = h.database.db;
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.record({ name: text, expires: fc.option(seconds), used: fc.option(seconds), scopes: fc.option(fc.subarray([...TOKEN_SCOPES])) }), { maxLength: 12 }),
      async (tokens) => {
        await db.deleteFrom('api_tokens').where('workspace_id', '=', s.workspaceId).where('id', '!=', s.apiTokenId).execute();
        for (const t of tokens) {
          const id = newId('tok');
          await db
            .insertInto('api_tokens')
            .values({
              id,
              workspace_id: s.workspaceId,
              name: t.name,
              prefix: id.slice(0, 12),
              token_hash: id,
              expires_at: t.expires,
              created_at: 1,
              created_by: s.owner.userId,
              last_used_at: t.used,
              scopes: t.scopes === null ? null : t.scopes.join(' '),
            })
            .execute();
        }
        // Read first: the token that asks is marked used (last_used_at) by its first request.
        const listed = await readAll('/v1/api_tokens', { authorization: `Bearer ${s.apiToken}` });
        const rows = await db
          .selectFrom('api_tokens')
          .select(['id', 'name', 'prefix', 'expires_at', 'created_at', 'created_by', 'last_used_at', 'scopes'])
          .where('workspace_id', '=', s.workspaceId)
          .orderBy('id', 'desc')
          .execute();
        const expected = rows.map((r) => ({
          ...r,
          expires_at: nullableNumber(r.expires_at),
          created_at: Number(r.created_at),
          last_used_at: nullableNumber(r.last_used_at),
          scopes: r.scopes === null ? [...TOKEN_SCOPES] : r.scopes.split(' ').filter(Boolean),
        }));
        assert.deepEqual(listed, expected);
      },
    ),
    { seed: PROPERTY_SEED, numRuns: 25 },
  );
});

const json = fc.jsonValue({ maxDepth: 3 }).map((v) => ({ v }));

test('notifications pages, all and unread: every notification as toNotification shows its row', async () => {
  const db = h.database.db;
  const user = s.member.userId;
  await fc.assert(
    fc.asyncProperty(fc.array(fc.record({ title: text, body: text, context: json, read: fc.option(seconds) }), { maxLength: 12 }), async (notes) => {
      await db.deleteFrom('notifications').where('user_id', '=', user).execute();
      for (const n of notes) {
        await db
          .insertInto('notifications')
          .values({
            id: newId('ntf'),
            user_id: user,
            type: 'machine_expiry',
            resource_type: 'machine',
            resource_id: 'mch_1',
            title: n.title,
            body: n.body,
            severity: 'info',
            context: JSON.stringify(n.context),
            read_at: n.read,
            created_at: 5,
            dedupe_key: null,
          })
          .execute();
      }
      const rows = await db.selectFrom('notifications').selectAll().where('user_id', '=', user).orderBy('id', 'desc').execute();
      const shown = rows.map((r) => ({ ...toNotification(r), read_at: nullableNumber(r.read_at), created_at: Number(r.created_at) }));
      const headers = { authorization: `Bearer ${s.member.session}` };
      assert.deepEqual(await readAll('/v1/notifications', headers), shown);
      assert.deepEqual(
        await readAll('/v1/notifications?unread=true', headers),
        shown.filter((n) => n.read_at === null),
      );
    }),
    { seed: PROPERTY_SEED, numRuns: 25 },
  );
});

test('written compactly, as every other answer: byte for byte what JSON.stringify makes of it', async () => {
  await h.database.db
    .insertInto('notifications')
    .values({
      id: newId('ntf'),
      user_id: s.owner.userId,
      type: 'machine_expiry',
      resource_type: 'machine',
      resource_id: 'mch_1',
      title: 'Machine expires soon',
      body: 'In 7 days',
      severity: 'info',
      context: '{"days_left":7,"tags":["a","b"]}',
      read_at: null,
      created_at: 5,
      dedupe_key: null,
    })
    .execute();
  for (const [url, credential] of [
    ['/v1/api_tokens', s.apiToken],
    ['/v1/notifications', s.owner.session],
  ] as const) {
    const res = await h.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${credential}` } });
    assert.equal(res.statusCode, 200);
    assert.ok(res.json().data.length > 0);
    assert.equal(res.body, JSON.stringify(res.json()), url);
  }
});

test('a pre-serialized answer stands for its value wherever something else serializes it', () => {
  assert.deepEqual(JSON.parse(JSON.stringify({ page: new PreSerialized('{"data":[1],"has_more":false}') })), { page: { data: [1], has_more: false } });
});

const nullableNumber = (v: unknown) => (v === null ? null : Number(v));
