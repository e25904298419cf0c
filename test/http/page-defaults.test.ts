import { test } from 'node:test';
import assert from 'node:assert/strict';
import { as } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';

/**
 * A list's page size has one source: its `PageQuery(max, default)` schema. The validator fills
 * the default in, so a list asked without `limit` answers exactly that many items (and says more
 * exist), and the OpenAPI document states the default of every list.
 */

const h = useTestApp();
const s = h.seeded;

async function fill(path: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const res = await h.app.inject({ method: 'POST', url: `/v1${path}`, headers: as(s.member.session, s.workspaceId), payload: { name: `item-${String(i).padStart(3, '0')}` } });
    assert.equal(res.statusCode, 201, res.body);
  }
}

async function pageWithoutLimit(path: string): Promise<{ data: unknown[]; has_more: boolean; next_cursor: string | null }> {
  const res = await h.app.inject({ method: 'GET', url: `/v1${path}`, headers: as(s.member.session, s.workspaceId) });
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}

test('every list operation of the OpenAPI document states its limit: a default within 1..maximum', async () => {
  const doc = (await h.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json<{
    paths: Record<string, Record<string, { parameters?: { name: string; in: string; schema: { default?: number; maximum?: number; minimum?: number } }[] }>>;
  }>();
  let lists = 0;
  for (const [path, ops] of Object.entries(doc.paths)) {
    const limit = ops.get?.parameters?.find((p) => p.in === 'query' && p.name === 'limit');
    if (!limit) continue;
    lists++;
    const { default: byDefault, maximum, minimum } = limit.schema;
    assert.equal(minimum, 1, `${path}: limit minimum`);
    assert.ok(Number.isInteger(byDefault) && Number.isInteger(maximum), `${path}: limit has a default and a maximum`);
    assert.ok(byDefault! >= 1 && byDefault! <= maximum!, `${path}: default ${byDefault} within 1..${maximum}`);
  }
  assert.ok(lists >= 12, `the document has its lists (${lists} found)`);
});

test('a list asked without limit answers its schema default: 50 secrets of 51, 20 packages of 21', async () => {
  await fill('/secrets', 51);
  const secrets = await pageWithoutLimit('/secrets');
  assert.equal(secrets.data.length, 50);
  assert.equal(secrets.has_more, true);
  assert.equal(typeof secrets.next_cursor, 'string');

  await fill('/packages', 21);
  const packages = await pageWithoutLimit('/packages');
  assert.equal(packages.data.length, 20);
  assert.equal(packages.has_more, true);
});
