import { test } from 'node:test';
import assert from 'node:assert/strict';
import { firstError, type Seed } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { dashboardBody, dashboardsClient, snippetWidget } from './fixtures.js';

/** Another workspace's dashboards, revisions and snippets do not exist for the caller: 404 (7002), never 403. */
let stranger: Seed;
const h = useTestApp({
  seed: 'Owner',
  setup: async () => {
    stranger = await h.seed('Stranger');
  },
});
const owner = h.seeded;

test("every dashboard route answers 404 7002 for another workspace's dashboard or revision, and changes nothing", async () => {
  const mine = dashboardsClient(h, owner);
  const snp = (await mine.createSnippet()).json();
  let d = (await mine.create(dashboardBody({ purpose: 'workspace_overview', widgets: [snippetWidget(snp)] }))).json();
  d = (await mine.patch(d.id, d.etag, { name: 'Second' })).json();
  const firstRevision = (await mine.revisions(d.id)).json().data[1].id;
  const before = { dashboard: (await mine.get(d.id)).json(), revisions: (await mine.revisions(d.id)).json() };

  const theirs = (await dashboardsClient(h, stranger).create(dashboardBody({ purpose: 'workspace_overview' }))).json();
  // A user who belongs to both workspaces, acting in the stranger's, sees only that one.
  await h.admin.addMember(stranger.workspaceId, owner.owner.userId, 'owner');
  for (const them of [dashboardsClient(h, stranger), dashboardsClient(h, stranger, stranger.apiToken), dashboardsClient(h, { ...stranger, owner: owner.owner })]) {
    const answers = {
      get: await them.get(d.id),
      patch: await them.patch(d.id, d.etag, { name: 'Mine now' }),
      delete: await them.remove(d.id, d.etag),
      revisions: await them.revisions(d.id),
      revision: await them.revision(d.id, firstRevision),
      restore: await them.restore(d.id, firstRevision, d.etag),
      reset: await them.reset(d.id, d.etag),
      'own dashboard, foreign revision': await them.revision(theirs.id, firstRevision),
      'restore of a foreign revision into their own': await them.restore(theirs.id, firstRevision, theirs.etag),
    };
    for (const [name, res] of Object.entries(answers)) {
      assert.equal(res.statusCode, 404, `${name}: ${res.statusCode} ${res.body}`);
      assert.equal(firstError(res.json()).code, 7002, name);
      assert.ok(!res.body.includes(owner.workspaceId), `${name} leaks the other workspace`);
    }
    const list = (await them.call('GET', '/v1/dashboards')).json();
    assert.ok(list.data.every((x: { workspace_id: string }) => x.workspace_id === stranger.workspaceId));
    const pin = await them.create(dashboardBody({ widgets: [snippetWidget(snp)] }));
    assert.equal(pin.statusCode, 404);
    assert.equal(firstError(pin.json()).code, 7002);
  }
  assert.deepEqual((await mine.get(d.id)).json(), before.dashboard);
  assert.deepEqual((await mine.revisions(d.id)).json(), before.revisions);
});
