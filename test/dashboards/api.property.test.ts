import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PROPERTY_SEED } from '../helpers/property.js';
import { useTestApp } from '../helpers/test-app.js';
import { structuralDiff } from '../../src/dashboards/diff.js';
import { Dashboard } from '../../src/dashboards/schemas/dashboard.js';
import { RevisionList } from '../../src/dashboards/schemas/revision.js';
import { dashboardContent, type SnippetPin } from './arbitraries.js';
import { assertConforms, dashboardsClient } from './fixtures.js';

/** Properties through the HTTP API on the engine of the run: fewer runs, each a few requests. */
const RUNS = Number(process.env.WSP_API_PROPERTY_RUNS ?? 20);

let c: ReturnType<typeof dashboardsClient>;
let pins: fc.Arbitrary<SnippetPin>;
const h = useTestApp({
  setup: async () => {
    c = dashboardsClient(h, s);
    const snippets: SnippetPin[] = [];
    for (let i = 0; i < 3; i++) snippets.push((await c.createSnippet({ name: `s${i}`, source: `select ${i}` })).json());
    pins = fc.constantFrom(...snippets);
  },
});
const s = h.seeded;

const contentOf = (d: Record<string, unknown>) => {
  const { name, description, purpose, filter_definitions, default_filter_values, widgets } = d;
  return { name, description, purpose, filter_definitions, default_filter_values, widgets } as Parameters<typeof structuralDiff>[0];
};

test('for random pairs of valid dashboards, the PATCH makes a revision whose diff is exactly what differs; every answer fits its schema', async () => {
  await fc.assert(
    fc.asyncProperty(dashboardContent({ pins }), dashboardContent({ pins }), async (a, b) => {
      const created = await c.create(a);
      assert.equal(created.statusCode, 201, created.body);
      const first = created.json();
      assertConforms(Dashboard, first);
      const patched = await c.patch(first.id, first.etag, b);
      assert.equal(patched.statusCode, 200, patched.body);
      const second = patched.json();
      assertConforms(Dashboard, second);
      const page = (await c.revisions(first.id)).json();
      assertConforms(RevisionList, page);
      const expected = structuralDiff(contentOf(first), contentOf(second));
      const unchanged = second.etag === first.etag;
      assert.equal(page.data.length, unchanged ? 1 : 2);
      if (!unchanged) {
        assert.deepEqual(page.data[0].structural_diff, expected);
        assert.equal(page.data[0].parent_revision_id, first.current_revision_id);
      } else {
        assert.deepEqual(expected.dashboard_fields, []);
      }
      assert.deepEqual(page.data.at(-1).structural_diff, null);
    }),
    { numRuns: RUNS, seed: PROPERTY_SEED },
  );
});

test('for any number of revisions and any page size, walking the cursor yields every revision once, newest first', async () => {
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 10 }), async (n, limit) => {
      let d = (await c.create({ name: 'r0', purpose: 'custom', filter_definitions: [], default_filter_values: {}, widgets: [] })).json();
      const made = [d.current_revision_id];
      for (let i = 1; i < n; i++) {
        d = (await c.patch(d.id, d.etag, { name: `r${i}` })).json();
        made.push(d.current_revision_id);
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res = await c.revisions(d.id, `?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
        assert.equal(res.statusCode, 200, res.body);
        const page = res.json();
        assertConforms(RevisionList, page);
        assert.ok(page.data.length >= 1 && page.data.length <= limit);
        assert.equal(page.has_more, page.next_cursor !== null);
        seen.push(...page.data.map((r: { id: string }) => r.id));
        cursor = page.next_cursor;
        pages++;
      } while (cursor);
      assert.deepEqual(seen, [...made].reverse());
      assert.equal(pages, Math.ceil(n / limit));
    }),
    { numRuns: RUNS, seed: PROPERTY_SEED },
  );
});
