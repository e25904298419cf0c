import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useTestApp } from '../helpers/test-app.js';
import { withPipelineStatuses } from '../helpers/openapi.js';
import { dereferenced } from '../helpers/openapi-deref.js';

/** The OpenAPI document shows the area whole: every route, its errors, and the unions as oneOf + discriminator. */
let doc: any;
const h = useTestApp({
  seed: false,
  setup: async () => {
    doc = dereferenced((await h.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json());
  },
});

test('every route of the area is documented with its error statuses', () => {
  const expected: Record<string, Record<string, string[]>> = {
    '/v1/snippets': { post: ['201', '401', '403', '409', '422'], get: ['200', '401', '403', '422'] },
    '/v1/snippets/{id}': { get: ['200', '401', '403', '404', '422'], patch: ['200', '401', '403', '404', '409', '422'], delete: ['204', '401', '403', '404', '409', '422'] },
    '/v1/snippets/{id}:archive': { post: ['200', '401', '403', '404', '409', '422'] },
    '/v1/snippets/{id}:unarchive': { post: ['200', '401', '403', '404', '409', '422'] },
    '/v1/dashboards': { post: ['201', '401', '403', '404', '409', '422'], get: ['200', '401', '403', '422'] },
    '/v1/dashboards/{id}': { get: ['200', '401', '403', '404', '422'], patch: ['200', '401', '403', '404', '409', '422'], delete: ['204', '401', '403', '404', '409', '422'] },
    '/v1/dashboards/{id}:reset': { post: ['200', '401', '403', '404', '409', '422'] },
    '/v1/dashboards/{id}/revisions': { get: ['200', '401', '403', '404', '422'] },
    '/v1/dashboards/{id}/revisions/{revision_id}': { get: ['200', '401', '403', '404', '422'] },
    '/v1/dashboards/{id}/revisions/{revision_id}:restore': { post: ['200', '401', '403', '404', '409', '422'] },
  };
  for (const [path, methods] of Object.entries(expected)) {
    for (const [method, statuses] of Object.entries(methods)) {
      const op = doc.paths[path]?.[method];
      assert.ok(op, `${method} ${path} is documented`);
      assert.deepEqual(Object.keys(op.responses).sort(), withPipelineStatuses(method, statuses), `${method} ${path}`);
    }
  }
});

/** A literal as the document writes it (`const`, or a one-value `enum`). */
const literal = (schema: any) => schema.const ?? (schema.enum?.length === 1 ? schema.enum[0] : undefined);

test('the revision schema is in the document: discriminated unions as oneOf with their discriminator, and the spec’s bounds', () => {
  const list = doc.paths['/v1/dashboards/{id}/revisions'].get.responses['200'].content['application/json'].schema;
  const revision = list.properties.data.items;
  assert.equal(revision.additionalProperties, false);
  const widgets = revision.properties.widgets.items;
  assert.equal(widgets.discriminator.propertyName, 'widget_type');
  assert.equal(widgets.oneOf.length, 2);
  const snippetWidget = widgets.oneOf.find((w: any) => literal(w.properties.widget_type) === 'snippet');
  assert.equal(snippetWidget.properties.refresh_policy.discriminator.propertyName, 'mode');
  assert.equal(snippetWidget.properties.freshness_policy.oneOf[1].properties.max_age_seconds.maximum, 86400);
  const filters = revision.properties.filter_definitions;
  assert.equal(filters.maxItems, 24);
  assert.equal(filters.items.discriminator.propertyName, 'kind');
  const variable = filters.items.oneOf.find((f: any) => literal(f.properties.kind) === 'variable');
  assert.equal(variable.properties.input.discriminator.propertyName, 'kind');
  assert.equal(variable.properties.key.pattern, '^var\\.[a-z][a-z0-9_]{0,31}$');
  assert.equal(literal(revision.properties.structural_diff.anyOf[0].properties.version), 1);
  assert.deepEqual(revision.properties.snippet_etag_drift.items.properties.restore_action.enum, ['none', 'reactivate', 'blocked']);
  const limit = doc.paths['/v1/dashboards/{id}/revisions'].get.parameters.find((p: any) => p.name === 'limit');
  assert.deepEqual([limit.schema.minimum, limit.schema.maximum, limit.schema.default], [1, 10, 10]);
  const body = doc.paths['/v1/dashboards'].post.requestBody.content['application/json'].schema;
  assert.equal(body.properties.widgets.items.discriminator.propertyName, 'widget_type');
});
