import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { useTestApp } from '../helpers/test-app.js';
import { assert422, dashboardBody, dashboardsClient, metricWidget, snippetWidget } from './fixtures.js';

/**
 * Every constraint of the spec's revision schema, each violated alone: at the bound the
 * dashboard is created, one past it the answer is 422 with exactly that field's path.
 */
let c: ReturnType<typeof dashboardsClient>;
let snippet: { id: string; etag: string };

const h = useTestApp({
  setup: async () => {
    c = dashboardsClient(h, s);
    snippet = (await c.createSnippet()).json();
  },
});
const s = h.seeded;

// Bodies are bent out of shape on purpose: typed loosely.
type Body = Record<string, any>;

/** Widgets 0 and 1 show metrics, widget 2 a snippet: paths below name them by index. */
function body(): Body {
  return dashboardBody({
    widgets: [metricWidget({ widget_id: 'w0' }), metricWidget({ widget_id: 'w1', position: 1 }), snippetWidget(snippet, { widget_id: 'w2', position: 2 })],
  });
}

interface Case {
  name: string;
  change: (b: Body) => void;
  /** null: valid; else the one path of the 422. */
  path: string[] | null;
}

const W = (i: number, ...rest: string[]) => ['body', 'widgets', String(i), ...rest];
const F = (i: number, ...rest: string[]) => ['body', 'filter_definitions', String(i), ...rest];
const str = (n: number) => 'x'.repeat(n);
const varFilter = (key: string, input: Record<string, unknown> = {}) => ({ kind: 'variable', key, input: { kind: 'boolean', key: 'v', label: 'V', ...input } });

async function check(cases: Case[]) {
  for (const k of cases) {
    const b = body();
    k.change(b);
    const res = await c.create(b);
    if (k.path === null) assert.equal(res.statusCode, 201, `${k.name}: expected 201, got ${res.statusCode} ${res.body.slice(0, 400)}`);
    else assert422(res, k.path);
  }
}

describe('filter definitions', () => {
  test('24 filter definitions are accepted, 25 are 422 on filter_definitions', () =>
    check([
      { name: '24', change: (b) => (b.filter_definitions = Array.from({ length: 24 }, (_, i) => varFilter(`var.v${i}`))), path: null },
      { name: '25', change: (b) => (b.filter_definitions = Array.from({ length: 25 }, (_, i) => varFilter(`var.v${i}`))), path: ['body', 'filter_definitions'] },
      { name: 'none', change: (b) => (b.filter_definitions = []), path: null },
    ]));

  test('label 1-100 characters on every kind that has one', () =>
    check([
      { name: 'time 100', change: (b) => (b.filter_definitions[0].label = str(100)), path: null },
      { name: 'time 101', change: (b) => (b.filter_definitions[0].label = str(101)), path: F(0, 'label') },
      { name: 'time empty', change: (b) => (b.filter_definitions[0].label = ''), path: F(0, 'label') },
      { name: 'comparison 101', change: (b) => (b.filter_definitions[1].label = str(101)), path: F(1, 'label') },
      { name: 'resource 101', change: (b) => (b.filter_definitions[2].label = str(101)), path: F(2, 'label') },
      { name: 'status 101', change: (b) => (b.filter_definitions[3].label = str(101)), path: F(3, 'label') },
      { name: 'variable input 100', change: (b) => (b.filter_definitions[4].input.label = str(100)), path: null },
      { name: 'variable input 101', change: (b) => (b.filter_definitions[4].input.label = str(101)), path: F(4, 'input', 'label') },
    ]));

  test('status options: 1-100 items of 1-100 characters', () =>
    check([
      { name: '100 items', change: (b) => (b.filter_definitions[3].options = Array.from({ length: 100 }, (_, i) => `o${i}`)), path: null },
      { name: '101 items', change: (b) => (b.filter_definitions[3].options = Array.from({ length: 101 }, (_, i) => `o${i}`)), path: F(3, 'options') },
      { name: 'no items', change: (b) => (b.filter_definitions[3].options = []), path: F(3, 'options') },
      { name: 'option of 100', change: (b) => (b.filter_definitions[3].options = [str(100)]), path: null },
      { name: 'option of 101', change: (b) => (b.filter_definitions[3].options = ['ok', str(101)]), path: F(3, 'options', '1') },
      { name: 'empty option', change: (b) => (b.filter_definitions[3].options = ['']), path: F(3, 'options', '0') },
    ]));

  test('fixed keys: time, comparison and status have their own key; resource keys and resources are the five kinds', () =>
    check([
      { name: 'time key', change: (b) => (b.filter_definitions[0].key = 'when'), path: F(0, 'key') },
      { name: 'comparison key', change: (b) => (b.filter_definitions[1].key = 'time'), path: F(1, 'key') },
      { name: 'status key', change: (b) => (b.filter_definitions[3].key = 'state'), path: F(3, 'key') },
      { name: 'resource key region', change: (b) => Object.assign(b.filter_definitions[2], { key: 'region', resource: 'region' }), path: null },
      { name: 'resource key bogus', change: (b) => (b.filter_definitions[2].key = 'machine'), path: F(2, 'key') },
      { name: 'resource bogus', change: (b) => (b.filter_definitions[2].resource = 'machine'), path: F(2, 'resource') },
      { name: 'resource missing', change: (b) => delete b.filter_definitions[2].resource, path: F(2, 'resource') },
    ]));

  test('variable keys match ^var\\.[a-z][a-z0-9_]{0,31}$', () => {
    const keyed = (key: string) => (b: Body) => (b.filter_definitions = [varFilter(key)]);
    return check([
      { name: 'var.a', change: keyed('var.a'), path: null },
      { name: '32 after var.', change: keyed(`var.a${'b'.repeat(31)}`), path: null },
      { name: 'digits and _', change: keyed('var.a_1'), path: null },
      { name: '33 after var.', change: keyed(`var.a${'b'.repeat(32)}`), path: F(0, 'key') },
      { name: 'upper case', change: keyed('var.A'), path: F(0, 'key') },
      { name: 'leading digit', change: keyed('var.1a'), path: F(0, 'key') },
      { name: 'nothing after var.', change: keyed('var.'), path: F(0, 'key') },
      { name: 'no var. prefix', change: keyed('region'), path: F(0, 'key') },
      { name: 'dash', change: keyed('var.a-b'), path: F(0, 'key') },
      { name: 'trailing newline', change: keyed('var.a\n'), path: F(0, 'key') },
    ]);
  });

  test('variable input keys match ^[a-z][a-z0-9_]{0,31}$', () => {
    const keyed = (key: string) => (b: Body) => (b.filter_definitions = [varFilter('var.v', { key })]);
    return check([
      { name: '32 chars', change: keyed(`a${'b'.repeat(31)}`), path: null },
      { name: '33 chars', change: keyed(`a${'b'.repeat(32)}`), path: F(0, 'input', 'key') },
      { name: 'var. prefix', change: keyed('var.a'), path: F(0, 'input', 'key') },
      { name: 'upper case', change: keyed('Ab'), path: F(0, 'input', 'key') },
    ]);
  });

  test('variable inputs: description, text max_length, enum options and default, resource default, time_range default', () => {
    const input = (fields: Record<string, unknown>) => (b: Body) => (b.filter_definitions = [varFilter('var.v', fields)]);
    const I = (...rest: string[]) => F(0, 'input', ...rest);
    return check([
      { name: 'description 500', change: input({ description: str(500) }), path: null },
      { name: 'description 501', change: input({ description: str(501) }), path: I('description') },
      { name: 'required not boolean', change: input({ required: 'yes' }), path: I('required') },
      { name: 'text max_length 1', change: input({ kind: 'text', max_length: 1 }), path: null },
      { name: 'text max_length 500', change: input({ kind: 'text', max_length: 500, default: str(500) }), path: null },
      { name: 'text max_length 0', change: input({ kind: 'text', max_length: 0 }), path: I('max_length') },
      { name: 'text max_length 501', change: input({ kind: 'text', max_length: 501 }), path: I('max_length') },
      { name: 'text default 501', change: input({ kind: 'text', default: str(501) }), path: I('default') },
      { name: 'enum 100 options', change: input({ kind: 'enum', options: Array.from({ length: 100 }, (_, i) => `o${i}`) }), path: null },
      { name: 'enum 101 options', change: input({ kind: 'enum', options: Array.from({ length: 101 }, (_, i) => `o${i}`) }), path: I('options') },
      { name: 'enum no options', change: input({ kind: 'enum', options: [] }), path: I('options') },
      { name: 'enum options missing', change: input({ kind: 'enum' }), path: I('options') },
      { name: 'enum default 101', change: input({ kind: 'enum', options: ['a'], default: str(101) }), path: I('default') },
      { name: 'enum default empty', change: input({ kind: 'enum', options: ['a'], default: '' }), path: I('default') },
      { name: 'enum default 100', change: input({ kind: 'enum', options: ['a'], default: str(100) }), path: null },
      { name: 'enum option of 100', change: input({ kind: 'enum', options: [str(100)] }), path: null },
      { name: 'enum option of 101', change: input({ kind: 'enum', options: ['a', str(101)] }), path: I('options', '1') },
      { name: 'enum empty option', change: input({ kind: 'enum', options: [''] }), path: I('options', '0') },
      { name: 'resource default 255', change: input({ kind: 'resource', resource: 'install', default: str(255) }), path: null },
      { name: 'resource default 256', change: input({ kind: 'resource', resource: 'install', default: str(256) }), path: I('default') },
      { name: 'resource default 100 items', change: input({ kind: 'resource', resource: 'install', default: Array(100).fill('i') }), path: null },
      { name: 'resource default 101 items', change: input({ kind: 'resource', resource: 'install', default: Array(101).fill('i') }), path: I('default') },
      { name: 'resource default a number', change: input({ kind: 'resource', resource: 'install', default: 7 }), path: I('default') },
      { name: 'resource default no items', change: input({ kind: 'resource', resource: 'install', default: [] }), path: I('default') },
      { name: 'resource default item 255', change: input({ kind: 'resource', resource: 'install', default: ['i', str(255)] }), path: null },
      { name: 'resource default item 256', change: input({ kind: 'resource', resource: 'install', default: ['i', str(256)] }), path: I('default', '1') },
      { name: 'resource missing', change: input({ kind: 'resource' }), path: I('resource') },
      { name: 'resource multiple not boolean', change: input({ kind: 'resource', resource: 'install', multiple: 1 }), path: I('multiple') },
      { name: 'time_range default half', change: input({ kind: 'time_range', default: { from: 1 } }), path: I('default', 'to') },
      { name: 'time_range default float', change: input({ kind: 'time_range', default: { from: 1.5, to: 2 } }), path: I('default', 'from') },
      { name: 'time_range default extra', change: input({ kind: 'time_range', default: { from: 1, to: 2, tz: 'utc' } }), path: I('default', 'tz') },
      { name: 'number not a number', change: input({ kind: 'number', min: '0' }), path: I('min') },
      { name: 'boolean default not boolean', change: input({ default: 'true' }), path: I('default') },
      { name: 'field of another kind', change: input({ options: ['a'] }), path: I('options') },
      { name: 'unknown kind', change: input({ kind: 'date' }), path: I('kind') },
    ]);
  });

  test('an unknown kind, a missing kind or a property of another kind name that field', () =>
    check([
      { name: 'unknown kind', change: (b) => (b.filter_definitions[0].kind = 'calendar'), path: F(0, 'kind') },
      { name: 'missing kind', change: (b) => delete b.filter_definitions[0].kind, path: F(0, 'kind') },
      { name: 'kind not a string', change: (b) => (b.filter_definitions[0].kind = 7), path: F(0, 'kind') },
      { name: 'extra property', change: (b) => (b.filter_definitions[1].options = ['a']), path: F(1, 'options') },
      { name: 'label missing', change: (b) => delete b.filter_definitions[3].label, path: F(3, 'label') },
      { name: 'input missing', change: (b) => delete b.filter_definitions[4].input, path: F(4, 'input') },
      { name: 'not an object', change: (b) => (b.filter_definitions[0] = 'time'), path: F(0) },
    ]));
});

describe('widgets', () => {
  test('col_span is 1, 2, 3 or 4', () =>
    check([
      { name: '1', change: (b) => (b.widgets[2].col_span = 1), path: null },
      { name: '4', change: (b) => (b.widgets[2].col_span = 4), path: null },
      { name: '5', change: (b) => (b.widgets[2].col_span = 5), path: W(2, 'col_span') },
      { name: '0', change: (b) => (b.widgets[2].col_span = 0), path: W(2, 'col_span') },
      { name: '2.5', change: (b) => (b.widgets[2].col_span = 2.5), path: W(2, 'col_span') },
      { name: '"2"', change: (b) => (b.widgets[2].col_span = '2'), path: W(2, 'col_span') },
    ]));

  test('freshness max_age_seconds is an integer 30-86400', () => {
    const maxAge = (v: unknown) => (b: Body) => (b.widgets[2].freshness_policy = { mode: 'max_age', max_age_seconds: v });
    const P = W(2, 'freshness_policy', 'max_age_seconds');
    return check([
      { name: '29', change: maxAge(29), path: P },
      { name: '30', change: maxAge(30), path: null },
      { name: '86400', change: maxAge(86400), path: null },
      { name: '86401', change: maxAge(86401), path: P },
      { name: '30.5', change: maxAge(30.5), path: P },
      { name: 'missing', change: (b) => (b.widgets[2].freshness_policy = { mode: 'max_age' }), path: P },
      { name: 'on provider_default', change: (b) => (b.widgets[2].freshness_policy = { mode: 'provider_default', max_age_seconds: 60 }), path: P },
      { name: 'bad mode', change: (b) => (b.widgets[2].freshness_policy = { mode: 'fresh' }), path: W(2, 'freshness_policy', 'mode') },
    ]);
  });

  test('refresh interval_seconds is an integer 60-86400; on_load and manual take nothing else', () => {
    const interval = (v: unknown) => (b: Body) => (b.widgets[2].refresh_policy = { mode: 'interval', interval_seconds: v });
    const P = W(2, 'refresh_policy', 'interval_seconds');
    return check([
      { name: '59', change: interval(59), path: P },
      { name: '60', change: interval(60), path: null },
      { name: '86400', change: interval(86400), path: null },
      { name: '86401', change: interval(86401), path: P },
      { name: 'manual', change: (b) => (b.widgets[2].refresh_policy = { mode: 'manual' }), path: null },
      { name: 'on_load', change: (b) => (b.widgets[2].refresh_policy = { mode: 'on_load' }), path: null },
      { name: 'on_load with interval', change: (b) => (b.widgets[2].refresh_policy = { mode: 'on_load', interval_seconds: 60 }), path: P },
    ]);
  });

  test('drill_down is null or 1-2048 characters; title null or at most 100', () =>
    check([
      { name: 'drill_down 2048', change: (b) => (b.widgets[2].drill_down = str(2048)), path: null },
      { name: 'drill_down 2049', change: (b) => (b.widgets[2].drill_down = str(2049)), path: W(2, 'drill_down') },
      { name: 'drill_down empty', change: (b) => (b.widgets[2].drill_down = ''), path: W(2, 'drill_down') },
      { name: 'drill_down null', change: (b) => (b.widgets[2].drill_down = null), path: null },
      { name: 'title 100', change: (b) => (b.widgets[2].title = str(100)), path: null },
      { name: 'title 101', change: (b) => (b.widgets[2].title = str(101)), path: W(2, 'title') },
      { name: 'title empty', change: (b) => (b.widgets[2].title = ''), path: null },
      { name: 'title number', change: (b) => (b.widgets[2].title = 5), path: W(2, 'title') },
    ]));

  test('metric_key is 1-100 characters of ^[a-z][a-z0-9_]*$; metric_version an integer > 0', () =>
    check([
      { name: 'key 100', change: (b) => (b.widgets[1].metric_key = `a${'b'.repeat(99)}`), path: null },
      { name: 'key 101', change: (b) => (b.widgets[1].metric_key = `a${'b'.repeat(100)}`), path: W(1, 'metric_key') },
      { name: 'key a_1', change: (b) => (b.widgets[1].metric_key = 'a_1'), path: null },
      { name: 'key 1a', change: (b) => (b.widgets[1].metric_key = '1a'), path: W(1, 'metric_key') },
      { name: 'key Upper', change: (b) => (b.widgets[1].metric_key = 'Cpu'), path: W(1, 'metric_key') },
      { name: 'key dotted', change: (b) => (b.widgets[1].metric_key = 'cpu.load'), path: W(1, 'metric_key') },
      { name: 'key empty', change: (b) => (b.widgets[1].metric_key = ''), path: W(1, 'metric_key') },
      { name: 'version 1', change: (b) => (b.widgets[1].metric_version = 1), path: null },
      { name: 'version 0', change: (b) => (b.widgets[1].metric_version = 0), path: W(1, 'metric_version') },
      { name: 'version -1', change: (b) => (b.widgets[1].metric_version = -1), path: W(1, 'metric_version') },
      { name: 'version 1.5', change: (b) => (b.widgets[1].metric_version = 1.5), path: W(1, 'metric_version') },
    ]));

  test('position, height, visualization and display_type', () =>
    check([
      { name: 'position 0', change: (b) => (b.widgets[2].position = 0), path: null },
      { name: 'position -1', change: (b) => (b.widgets[2].position = -1), path: W(2, 'position') },
      { name: 'position 1.5', change: (b) => (b.widgets[2].position = 1.5), path: W(2, 'position') },
      { name: 'height huge', change: (b) => (b.widgets[2].height = 'huge'), path: W(2, 'height') },
      { name: 'visualization null', change: (b) => (b.widgets[2].visualization = null), path: null },
      { name: 'visualization status_list', change: (b) => (b.widgets[2].visualization = 'status_list'), path: null },
      { name: 'visualization pie', change: (b) => (b.widgets[2].visualization = 'pie'), path: W(2, 'visualization') },
      { name: 'display_type timeseries', change: (b) => (b.widgets[2].display_type = 'timeseries'), path: null },
      { name: 'display_type null', change: (b) => (b.widgets[2].display_type = null), path: null },
      { name: 'display_type line', change: (b) => (b.widgets[2].display_type = 'line'), path: W(2, 'display_type') },
      { name: 'visualization_options not an object', change: (b) => (b.widgets[2].visualization_options = []), path: W(2, 'visualization_options') },
    ]));

  test('bindings: inherit a known filter key or var.<name>, fixed any JSON value, unbound nothing', () => {
    const bind = (binding: unknown) => (b: Body) => (b.widgets[2].input_bindings = { x: binding });
    const B = (...rest: string[]) => W(2, 'input_bindings', 'x', ...rest);
    return check([
      ...['time', 'comparison', 'cluster', 'install', 'product', 'package', 'region', 'status', 'var.tier'].map((k) => ({
        name: `inherit ${k}`,
        change: bind({ mode: 'inherit', filter_key: k }),
        path: null,
      })),
      { name: 'inherit bogus', change: bind({ mode: 'inherit', filter_key: 'machine' }), path: B('filter_key') },
      { name: 'inherit var.Upper', change: bind({ mode: 'inherit', filter_key: 'var.Tier' }), path: B('filter_key') },
      { name: 'inherit var. 32 characters', change: bind({ mode: 'inherit', filter_key: `var.a${str(31)}` }), path: null },
      { name: 'inherit var. 33 characters', change: bind({ mode: 'inherit', filter_key: `var.a${str(32)}` }), path: B('filter_key') },
      { name: 'inherit var. digit first', change: bind({ mode: 'inherit', filter_key: 'var.1a' }), path: B('filter_key') },
      { name: 'inherit var. alone', change: bind({ mode: 'inherit', filter_key: 'var.' }), path: B('filter_key') },
      { name: 'inherit missing key', change: bind({ mode: 'inherit' }), path: B('filter_key') },
      { name: 'fixed null', change: bind({ mode: 'fixed', value: null }), path: null },
      { name: 'fixed nested', change: bind({ mode: 'fixed', value: { a: [1, 'two', { three: true }] } }), path: null },
      { name: 'fixed missing value', change: bind({ mode: 'fixed' }), path: B('value') },
      { name: 'unbound with value', change: bind({ mode: 'unbound', value: 1 }), path: B('value') },
      { name: 'bad mode', change: bind({ mode: 'bound' }), path: B('mode') },
      { name: 'metric filter_bindings', change: (b) => (b.widgets[1].filter_bindings = { t: { mode: 'inherit', filter_key: 'nope' } }), path: W(1, 'filter_bindings', 't', 'filter_key') },
    ]);
  });

  test('widget_type picks the fields: each type requires its own and refuses the other’s', () =>
    check([
      { name: 'unknown type', change: (b) => (b.widgets[2].widget_type = 'chart'), path: W(2, 'widget_type') },
      { name: 'missing type', change: (b) => delete b.widgets[2].widget_type, path: W(2, 'widget_type') },
      { name: 'snippet without snippet_etag', change: (b) => delete b.widgets[2].snippet_etag, path: W(2, 'snippet_etag') },
      { name: 'snippet with metric_key', change: (b) => (b.widgets[2].metric_key = 'cpu'), path: W(2, 'metric_key') },
      { name: 'metric without filter_bindings', change: (b) => delete b.widgets[1].filter_bindings, path: W(1, 'filter_bindings') },
      { name: 'metric with input_bindings', change: (b) => (b.widgets[1].input_bindings = {}), path: W(1, 'input_bindings') },
      { name: 'common field missing', change: (b) => delete b.widgets[1].freshness_policy, path: W(1, 'freshness_policy') },
      { name: 'unknown property', change: (b) => (b.widgets[2].color = 'red'), path: W(2, 'color') },
      { name: 'widget_id 54', change: (b) => (b.widgets[2].widget_id = str(54)), path: null },
      { name: 'widget_id 55', change: (b) => (b.widgets[2].widget_id = str(55)), path: W(2, 'widget_id') },
      { name: 'widget_id empty', change: (b) => (b.widgets[2].widget_id = ''), path: W(2, 'widget_id') },
      { name: 'snippet_id 55', change: (b) => (b.widgets[2].snippet_id = str(55)), path: W(2, 'snippet_id') },
      { name: 'snippet_id empty', change: (b) => (b.widgets[2].snippet_id = ''), path: W(2, 'snippet_id') },
    ]));

  test('snippet_id of 54 characters is well-formed: past validation, an unknown snippet is 404 at that field', async () => {
    const b = body();
    b.widgets[2].snippet_id = `snp_${str(50)}`;
    const res = await c.create(b);
    assert.equal(res.statusCode, 404, res.body);
    assert.equal(res.json().errors[0].code, 7002);
    assert.deepEqual(res.json().errors[0].path, W(2, 'snippet_id'));
  });

  test('at most 100 widgets', () =>
    check([
      { name: '100', change: (b) => (b.widgets = Array.from({ length: 100 }, (_, i) => metricWidget({ widget_id: `w${i}` }))), path: null },
      { name: '101', change: (b) => (b.widgets = Array.from({ length: 101 }, (_, i) => metricWidget({ widget_id: `w${i}` }))), path: ['body', 'widgets'] },
    ]));
});

describe('the dashboard itself', () => {
  test('name 1-100, description null or at most 1000, purpose of two, free-form default values, no extra properties', () =>
    check([
      { name: 'name 100', change: (b) => (b.name = str(100)), path: null },
      { name: 'name 101', change: (b) => (b.name = str(101)), path: ['body', 'name'] },
      { name: 'name empty', change: (b) => (b.name = ''), path: ['body', 'name'] },
      { name: 'name missing', change: (b) => delete b.name, path: ['body', 'name'] },
      { name: 'description 1000', change: (b) => (b.description = str(1000)), path: null },
      { name: 'description 1001', change: (b) => (b.description = str(1001)), path: ['body', 'description'] },
      { name: 'description omitted', change: (b) => delete b.description, path: null },
      { name: 'purpose bogus', change: (b) => (b.purpose = 'personal'), path: ['body', 'purpose'] },
      { name: 'widgets missing', change: (b) => delete b.widgets, path: ['body', 'widgets'] },
      { name: 'default values array', change: (b) => (b.default_filter_values = []), path: ['body', 'default_filter_values'] },
      { name: 'summary on create', change: (b) => (b.summary = 'first'), path: ['body', 'summary'] },
      { name: 'extra property', change: (b) => (b.owner = 'me'), path: ['body', 'owner'] },
    ]));

  test('widget ids and filter keys are unique: the repeat is named (7104, 7105)', async () => {
    const dupWidget = body();
    dupWidget.widgets[2].widget_id = 'w0';
    assert422(await c.create(dupWidget), W(2, 'widget_id'), 7104);
    const dupFilter = body();
    dupFilter.filter_definitions.push({ kind: 'time', key: 'time', label: 'Again' });
    assert422(await c.create(dupFilter), F(dupFilter.filter_definitions.length - 1, 'key'), 7105);
    const dupVariable = body();
    dupVariable.filter_definitions.push(varFilter('var.tier'));
    assert422(await c.create(dupVariable), F(dupVariable.filter_definitions.length - 1, 'key'), 7105);
    const base = (await c.create(body())).json();
    assert422(await c.patch(base.id, base.etag, { widgets: [metricWidget({ widget_id: 'a' }), metricWidget({ widget_id: 'a' })] }), W(1, 'widget_id'), 7104);
    // A rule of the body: checked with the schema, before Service-Context (403) and existence (404).
    const noContext = (payload: object) => h.app.inject({ method: 'POST', url: '/v1/dashboards', headers: { authorization: `Bearer ${s.owner.session}` }, payload });
    assert422(await noContext(dupWidget), W(2, 'widget_id'), 7104);
    assert.equal((await noContext(body())).statusCode, 403);
    assert422(await c.patch('dash_' + '0'.repeat(26), 'x', { filter_definitions: dupFilter.filter_definitions }), F(dupFilter.filter_definitions.length - 1, 'key'), 7105);
  });

  test('several violations give one entry each, each with its path', async () => {
    const b = body();
    b.name = '';
    b.widgets[2].col_span = 9;
    b.filter_definitions[3].options = [];
    const res = await c.create(b);
    assert.equal(res.statusCode, 422);
    const paths = (res.json().errors as { path: string[] }[]).map((e) => e.path.join('.')).sort();
    assert.deepEqual(paths, ['body.filter_definitions.3.options', 'body.name', 'body.widgets.2.col_span']);
  });
});

describe('path, query and headers', () => {
  test('dashboard and revision ids of 55 characters are looked up (404); 56 is 422 on the path', async () => {
    const res55 = await c.get(str(55));
    assert.equal(res55.statusCode, 404);
    assert.equal(res55.json().errors[0].code, 7002);
    assert422(await c.get(str(56)), ['path', 'id']);
    assert422(await c.revisions(str(56)), ['path', 'id']);
    assert.equal((await c.revisions(str(55))).statusCode, 404);
    const d = (await c.create(body())).json();
    assert.equal((await c.revision(d.id, str(55))).statusCode, 404);
    assert422(await c.revision(d.id, str(56)), ['path', 'revision_id']);
    assert422(await c.restore(d.id, str(56), d.etag), ['path', 'revision_id']);
    assert422(await c.reset(str(56), d.etag), ['path', 'id']);
  });

  test('revisions limit is 1-10; a cursor that is not one of this list is 422', async () => {
    const d = (await c.create(body())).json();
    for (const limit of ['1', '10']) assert.equal((await c.revisions(d.id, `?limit=${limit}`)).statusCode, 200);
    for (const limit of ['0', '11', 'ten', '1.5']) assert422(await c.revisions(d.id, `?limit=${limit}`), ['query', 'limit']);
    assert422(await c.revisions(d.id, '?cursor=not-a-cursor'), ['query', 'cursor']);
    assert422(await c.revisions(d.id, '?cursor=a%2Bb'), ['query', 'cursor']);
    assert422(await c.revisions(d.id, '?page=2'), ['query', 'page']);
  });

  test('writes need If-Match (1-256 characters)', async () => {
    const d = (await c.create(body())).json();
    const noIfMatch = await c.call('PATCH', `/v1/dashboards/${d.id}`, { name: 'x' });
    assert422(noIfMatch, ['headers', 'if-match']);
    assert422(await c.call('DELETE', `/v1/dashboards/${d.id}`), ['headers', 'if-match']);
    assert422(await c.call('POST', `/v1/dashboards/${d.id}:reset`), ['headers', 'if-match']);
    assert422(await c.call('POST', `/v1/dashboards/${d.id}/revisions/${d.current_revision_id}:restore`), ['headers', 'if-match']);
    assert422(await c.call('PATCH', `/v1/dashboards/${d.id}`, { name: 'x' }, { 'if-match': str(257) }), ['headers', 'if-match']);
  });

  test('PATCH bodies follow the same rules; summary null or at most 1000 characters', async () => {
    const d = (await c.create(body())).json();
    assert422(await c.patch(d.id, d.etag, { widgets: [metricWidget({ col_span: 5 })] }), W(0, 'col_span'));
    assert422(await c.patch(d.id, d.etag, { name: 'x', summary: str(1001) }), ['body', 'summary']);
    assert422(await c.patch(d.id, d.etag, { name: 'x', etag: 'y' }), ['body', 'etag']);
    assert422(await c.reset(d.id, d.etag, { summary: 5 }), ['body', 'summary']);
    assert422(await c.restore(d.id, d.current_revision_id, d.etag, { note: 'x' }), ['body', 'note']);
    const ok = await c.patch(d.id, d.etag, { name: 'x', summary: str(1000) });
    assert.equal(ok.statusCode, 200);
  });
});
