import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PROPERTY_SEED } from '../helpers/property.js';
import { sameContent, structuralDiff } from '../../src/dashboards/diff.js';
import { DASHBOARD_FIELDS, WIDGET_FIELDS, type DashboardField, type WidgetField } from '../../src/dashboards/schemas/revision.js';
import type { DashboardContent } from '../../src/dashboards/schemas/content.js';
import type { Widget } from '../../src/dashboards/schemas/widgets.js';
import { dashboardContent, widget, anyPin } from './arbitraries.js';
import { COMMON_FIELDS, dashboardEdits, METRIC_FIELDS, SNIPPET_FIELDS, switchType, widgetEdits } from './mutations.js';
import { reverseKeys } from './fixtures.js';

/** The pure diff, over generated pairs. No database: many runs are cheap. */
const RUNS = Number(process.env.WSP_PROPERTY_RUNS ?? 300);

/** JSON with sorted keys: an equality independent of the one the diff uses. */
const canonical = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x));

type WidgetPlan = { kind: 'keep' } | { kind: 'remove' } | { kind: 'edit'; fields: WidgetField[]; repin: boolean } | { kind: 'switch' };

const widgetPlan = (w: Widget): fc.Arbitrary<WidgetPlan> => {
  const own = w.widget_type === 'snippet' ? SNIPPET_FIELDS : METRIC_FIELDS;
  return fc.oneof(
    fc.constant({ kind: 'keep' as const }),
    fc.constant({ kind: 'remove' as const }),
    fc.record({ kind: fc.constant('edit' as const), fields: fc.subarray([...COMMON_FIELDS, ...own], { minLength: 1 }), repin: fc.boolean() }),
    fc.constant({ kind: 'switch' as const }),
  );
};

const scenario = dashboardContent().chain((base) =>
  fc.record({
    base: fc.constant(base),
    dashboardFields: fc.subarray([...DASHBOARD_FIELDS]),
    plans: fc.tuple(...base.widgets.map(widgetPlan)),
    added: fc.array(widget('x', anyPin), { maxLength: 3 }),
    order: fc.func(fc.integer()),
  }),
);

test('the diff lists exactly the dashboard fields and widget fields an edit changed, whatever the key order', () => {
  fc.assert(
    fc.property(scenario, ({ base, dashboardFields, plans, added, order }) => {
      const next: Record<string, unknown> = { ...base };
      for (const f of dashboardFields) next[f] = dashboardEdits[f](base);
      const expectedChanged = new Map<string, WidgetField[]>();
      const kept: Widget[] = [];
      base.widgets.forEach((w, i) => {
        const plan = plans[i]!;
        if (plan.kind === 'remove') return;
        if (plan.kind === 'keep') kept.push(w);
        if (plan.kind === 'switch') {
          kept.push(switchType(w));
          expectedChanged.set(
            w.widget_id,
            WIDGET_FIELDS.filter((f) => f === 'widget_type' || SNIPPET_FIELDS.includes(f) || METRIC_FIELDS.includes(f)),
          );
        }
        if (plan.kind === 'edit') {
          const edited: Record<string, unknown> = { ...w };
          for (const f of plan.fields) edited[f] = widgetEdits[f]!(w);
          // A new snippet_etag alone is no change the diff shows.
          if (plan.repin && w.widget_type === 'snippet') edited.snippet_etag = `${w.snippet_etag}!`;
          kept.push(edited as Widget);
          expectedChanged.set(
            w.widget_id,
            WIDGET_FIELDS.filter((f) => plan.fields.includes(f)),
          );
        }
      });
      const fresh = added.map((w, i) => ({ ...w, widget_id: `new_${i}` }));
      // The array's order is not content: shuffle it, and every object's keys.
      const all = [...kept, ...fresh].sort((a, b) => order(a.widget_id) - order(b.widget_id) || (a.widget_id < b.widget_id ? -1 : 1));
      next.widgets = all;
      const diff = structuralDiff(base, reverseKeys(next) as DashboardContent);

      assert.deepEqual(diff.version, 1);
      assert.deepEqual(
        diff.dashboard_fields,
        DASHBOARD_FIELDS.filter((f) => dashboardFields.includes(f)),
      );
      assert.deepEqual(diff.widgets.added, { count: fresh.length, widget_ids: all.filter((w) => w.widget_id.startsWith('new_')).map((w) => w.widget_id) });
      const removed = base.widgets.filter((_, i) => plans[i]!.kind === 'remove').map((w) => w.widget_id);
      assert.deepEqual(diff.widgets.removed, { count: removed.length, widget_ids: removed });
      const changed = all.filter((w) => expectedChanged.has(w.widget_id)).map((w) => ({ widget_id: w.widget_id, fields: expectedChanged.get(w.widget_id)! }));
      assert.deepEqual(diff.widgets.changed, { count: changed.length, widgets: changed });
    }),
    { numRuns: RUNS, seed: PROPERTY_SEED },
  );
});

test('for any two dashboards, a field is listed exactly when its values differ as canonical JSON', () => {
  fc.assert(
    fc.property(dashboardContent(), dashboardContent(), (a, b) => {
      const diff = structuralDiff(a, b);
      const differs = (x: unknown, y: unknown) => canonical(x) !== canonical(y);
      assert.deepEqual(
        diff.dashboard_fields,
        DASHBOARD_FIELDS.filter((f: DashboardField) => differs(a[f], b[f])),
      );
      const before = new Map(a.widgets.map((w) => [w.widget_id, w as Record<string, unknown>]));
      const after = new Map(b.widgets.map((w) => [w.widget_id, w as Record<string, unknown>]));
      assert.deepEqual(
        diff.widgets.added.widget_ids,
        b.widgets.filter((w) => !before.has(w.widget_id)).map((w) => w.widget_id),
      );
      assert.deepEqual(
        diff.widgets.removed.widget_ids,
        a.widgets.filter((w) => !after.has(w.widget_id)).map((w) => w.widget_id),
      );
      const changed = b.widgets
        .filter((w) => before.has(w.widget_id))
        .map((w) => ({ widget_id: w.widget_id, fields: WIDGET_FIELDS.filter((f) => differs(before.get(w.widget_id)![f], (w as Record<string, unknown>)[f])) }))
        .filter((x) => x.fields.length > 0);
      assert.deepEqual(diff.widgets.changed.widgets, changed);
      for (const part of [diff.widgets.added, diff.widgets.removed]) assert.equal(part.count, part.widget_ids.length);
      assert.equal(diff.widgets.changed.count, diff.widgets.changed.widgets.length);
      // Nothing differs from itself, in any key order.
      assert.ok(sameContent(a, reverseKeys(a)));
      assert.deepEqual(structuralDiff(b, reverseKeys(b)).dashboard_fields, []);
    }),
    { numRuns: RUNS, seed: PROPERTY_SEED },
  );
});
