import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { countingStatements } from '../helpers/statements.js';
import { createAdminService } from '../../src/admin/service.js';
import { systemClock } from '../../src/shared/clock.js';
import { hashToken, newApiToken } from '../../src/auth/credentials.js';
import { MAX_CREDENTIALS_A_STATEMENT } from '../../src/db/credential-rows.js';
import { TOKEN_LIST_PREFIX, tokenStore } from '../../src/tokens/store.js';

/**
 * The credential lookups of one turn of the event loop are answered by one statement
 * (src/db/credential-rows.ts): each lookup gets its own row (or none), and nothing outlives the
 * statement, so a token deleted before a lookup starts is not found by it. Before the change each
 * lookup was a statement of its own (the counts below fail on that code).
 */
let tdb: TestDatabase;
let ws: string;
const hashes: string[] = [];
before(async () => {
  tdb = await openTestDatabase();
  ws = (await createAdminService(tdb.database.db, systemClock).bootstrap()).workspace_id;
  const user = (await tdb.database.db.selectFrom('users').select('id').executeTakeFirstOrThrow()).id;
  for (let i = 0; i < 40; i++) {
    const hash = hashToken(newApiToken());
    hashes.push(hash);
    await tokenStore.insert(tdb.database.db, {
      id: `tok_rows${String(i).padStart(3, '0')}`,
      workspace_id: ws,
      name: `t${i}`,
      prefix: 'sk_svc_x',
      token_hash: hash,
      expires_at: null,
      created_at: 1000,
      created_by: user,
      last_used_at: null,
      scopes: null,
    });
  }
});
after(() => tdb.cleanup());

test('the lookups of one turn: one statement, each its own row, none for an unknown hash, a repeated one answered alike', async () => {
  const c = countingStatements(tdb.database.db);
  const asked = [hashes[0]!, hashes[1]!, hashToken(newApiToken()), hashes[0]!, hashes[2]!];
  const rows = await Promise.all(asked.map((h) => tokenStore.byHash(c.db, h)));
  assert.equal(c.statements(), 1);
  assert.deepEqual(
    rows.map((r) => r?.id),
    ['tok_rows000', 'tok_rows001', undefined, 'tok_rows000', 'tok_rows002'],
  );
  assert.equal(rows[0]!.workspace_id, ws);
});

test('with the list: the version read in the same statement, for each', async () => {
  const c = countingStatements(tdb.database.db);
  const rows = await Promise.all([3, 4].map((i) => tokenStore.byHashWithList(c.db, hashes[i]!, TOKEN_LIST_PREFIX)));
  assert.equal(c.statements(), 1);
  const [stored] = await tdb.database.db
    .selectFrom('list_versions')
    .select('version')
    .where('list', '=', TOKEN_LIST_PREFIX + ws)
    .execute();
  for (const r of rows) assert.equal(Number(r!.list_version), Number(stored!.version));
});

test('with lists of parts (prefix, owner, suffix): each version in its column, 0 for a list never written, in one statement', async () => {
  await tdb.database.db
    .insertInto('list_versions')
    .values({ list: `parts:${ws}:one`, version: 5 })
    .execute();
  const c = countingStatements(tdb.database.db);
  const lists = [
    { prefix: 'parts:', suffix: ':one' },
    { prefix: 'parts:', suffix: ':none' },
  ];
  const rows = (await Promise.all([9, 10].map((i) => tokenStore.byHashWithList(c.db, hashes[i]!, lists)))) as (Record<string, unknown> | undefined)[];
  assert.equal(c.statements(), 1);
  for (const r of rows) assert.deepEqual([Number(r!.list_version), r!.list_version_1 ?? 0], [5, 0]);
});

test('more lookups in one turn than one statement takes: every one answered', async () => {
  const c = countingStatements(tdb.database.db);
  const rows = await Promise.all(hashes.map((h) => tokenStore.byHash(c.db, h)));
  assert.equal(c.statements(), Math.ceil(hashes.length / MAX_CREDENTIALS_A_STATEMENT));
  assert.deepEqual(
    rows.map((r) => r?.id),
    hashes.map((_, i) => `tok_rows${String(i).padStart(3, '0')}`),
  );
});

test('a token deleted before a lookup starts is not found, though it was a turn before', async () => {
  const db = tdb.database.db;
  assert.equal((await tokenStore.byHash(db, hashes[5]!))?.id, 'tok_rows005');
  await tokenStore.delete(db, ws, 'tok_rows005');
  assert.equal(await tokenStore.byHash(db, hashes[5]!), undefined);
});

test('a statement that fails fails every lookup it was to answer', async () => {
  const c = countingStatements(tdb.database.db, true);
  const results = await Promise.allSettled([6, 7, 8].map((i) => tokenStore.byHash(c.db, hashes[i]!)));
  assert.equal(c.statements(), 1);
  assert.deepEqual(
    results.map((r) => r.status),
    ['rejected', 'rejected', 'rejected'],
  );
});
