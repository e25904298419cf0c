import assert from 'node:assert/strict';
import { Ajv, type ValidateFunction } from 'ajv';
import type { TSchema } from '@sinclair/typebox';
import { as, type Seed, type TestApp } from '../helpers/harness.js';

/** Requests of the dashboards area, made as the seeded owner unless told otherwise. */
export function dashboardsClient(h: TestApp, s: Seed, credential: string = s.owner.session) {
  const headers = (extra: Record<string, string> = {}) => as(credential, credential === s.apiToken ? undefined : s.workspaceId, extra);
  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, extra: Record<string, string> = {}) =>
    h.app.inject({ method, url, headers: headers(extra), ...(payload !== undefined ? { payload: payload as object } : {}) });
  const ifMatch = (etag: string) => ({ 'if-match': `"${etag}"` });
  return {
    call,
    createSnippet: (body: object = { name: 'Errors', source: 'select count(*) from errors' }) => call('POST', '/v1/snippets', body),
    snippet: (id: string) => call('GET', `/v1/snippets/${id}`),
    patchSnippet: (id: string, etag: string, body: object) => call('PATCH', `/v1/snippets/${id}`, body, ifMatch(etag)),
    snippetAction: (id: string, action: 'archive' | 'unarchive', etag: string) => call('POST', `/v1/snippets/${id}:${action}`, undefined, ifMatch(etag)),
    deleteSnippet: (id: string, etag: string) => call('DELETE', `/v1/snippets/${id}`, undefined, ifMatch(etag)),
    create: (body: object) => call('POST', '/v1/dashboards', body),
    get: (id: string) => call('GET', `/v1/dashboards/${id}`),
    patch: (id: string, etag: string, body: object) => call('PATCH', `/v1/dashboards/${id}`, body, ifMatch(etag)),
    remove: (id: string, etag: string) => call('DELETE', `/v1/dashboards/${id}`, undefined, ifMatch(etag)),
    revisions: (id: string, query = '', extra: Record<string, string> = {}) => call('GET', `/v1/dashboards/${id}/revisions${query}`, undefined, extra),
    revision: (id: string, revisionId: string) => call('GET', `/v1/dashboards/${id}/revisions/${revisionId}`),
    restore: (id: string, revisionId: string, etag: string, body?: object) => call('POST', `/v1/dashboards/${id}/revisions/${revisionId}:restore`, body, ifMatch(etag)),
    reset: (id: string, etag: string, body?: object) => call('POST', `/v1/dashboards/${id}:reset`, body, ifMatch(etag)),
  };
}

export function metricWidget(overrides: Record<string, unknown> = {}) {
  return {
    widget_type: 'platform_metric',
    position: 0,
    title: 'Machines',
    col_span: 2,
    height: 'standard',
    drill_down: null,
    visualization_options: {},
    freshness_policy: { mode: 'provider_default' },
    metric_key: 'machines_running',
    metric_version: 1,
    filter_bindings: { time: { mode: 'inherit', filter_key: 'time' } },
    ...overrides,
  };
}

export function snippetWidget(snippet: { id: string; etag: string }, overrides: Record<string, unknown> = {}) {
  return {
    widget_type: 'snippet',
    position: 1,
    title: null,
    col_span: 4,
    height: 'tall',
    drill_down: 'https://example.test/errors',
    visualization_options: { stacked: true },
    freshness_policy: { mode: 'max_age', max_age_seconds: 300 },
    snippet_id: snippet.id,
    snippet_etag: snippet.etag,
    input_bindings: { since: { mode: 'inherit', filter_key: 'time' }, limit: { mode: 'fixed', value: 50 }, region: { mode: 'unbound' } },
    visualization: 'table',
    refresh_policy: { mode: 'interval', interval_seconds: 60 },
    display_type: 'table',
    ...overrides,
  };
}

/** Every kind of filter definition, each valid. */
export function allFilters() {
  return [
    { kind: 'time', key: 'time', label: 'Time' },
    { kind: 'comparison', key: 'comparison', label: 'Compare' },
    { kind: 'resource', key: 'cluster', resource: 'cluster', label: 'Cluster' },
    { kind: 'status', key: 'status', label: 'Status', options: ['ok', 'failing'] },
    { kind: 'variable', key: 'var.window', input: { kind: 'time_range', key: 'window', label: 'Window', default: { from: 0, to: 60 } } },
    { kind: 'variable', key: 'var.region', input: { kind: 'resource', key: 'region', label: 'Region', resource: 'region', default: ['fsn1', 'nbg1'], multiple: true } },
    { kind: 'variable', key: 'var.tier', input: { kind: 'enum', key: 'tier', label: 'Tier', options: ['free', 'pro'], default: 'pro', required: true } },
    { kind: 'variable', key: 'var.live', input: { kind: 'boolean', key: 'live', label: 'Live', default: false } },
    { kind: 'variable', key: 'var.threshold', input: { kind: 'number', key: 'threshold', label: 'Threshold', min: 0, max: 1.5, default: 0.5 } },
    { kind: 'variable', key: 'var.query', input: { kind: 'text', key: 'query', label: 'Query', description: 'Free text', default: 'x', max_length: 500 } },
  ];
}

export function dashboardBody(overrides: Record<string, unknown> = {}) {
  return {
    name: 'Operations',
    description: 'What runs where',
    purpose: 'custom',
    filter_definitions: allFilters(),
    default_filter_values: { time: { from: -3600, to: 0 }, 'var.tier': 'pro' },
    widgets: [metricWidget({ widget_id: 'wdg_machines' })],
    ...overrides,
  };
}

const responseAjv = new Ajv({ discriminator: true, strict: false, allErrors: true });
const compiled = new WeakMap<object, ValidateFunction>();

/** Asserts that `value` is valid against the response schema `schema` (the route's own). */
export function assertConforms(schema: TSchema, value: unknown, what = 'response'): void {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = responseAjv.compile(schema);
    compiled.set(schema, validate);
  }
  assert.ok(validate(value), `${what} does not match its schema: ${JSON.stringify(validate.errors?.slice(0, 3))}`);
}

/** A 422 whose only entry names `path`. */
export function assert422(res: { statusCode: number; json(): any; body: string }, path: string[], code = 7003): void {
  assert.equal(res.statusCode, 422, `expected 422 at ${path.join('.')}, got ${res.statusCode}: ${res.body.slice(0, 400)}`);
  const errors = res.json().errors as { code: number; path?: string[] }[];
  assert.deepEqual(
    errors.map((e) => e.path),
    [path],
    `expected one entry at ${JSON.stringify(path)}: ${res.body.slice(0, 600)}`,
  );
  assert.equal(errors[0]!.code, code);
}

/** The same JSON value with the keys of every object in reverse order. */
export function reverseKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map(reverseKeys) as T;
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .reverse()
        .map(([k, v]) => [k, reverseKeys(v)]),
    ) as T;
  return value;
}
