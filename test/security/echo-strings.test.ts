import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PROPERTY_SEED } from '../helpers/property.js';
import { as } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';

/**
 * Issue 9.1: strings that are accepted come back byte for byte. For every create or change of
 * each area whose string fields are shown again, generated text (any Unicode, astral, combining
 * marks, right-to-left, quotes, template and SQL metacharacters, boundary lengths) is accepted
 * exactly when it keeps the field's documented rules, and a later GET returns the identical
 * string. A refusal is a 422 at that field, never a 5xx. WSP_FUZZ_RUNS sets the runs per field.
 */
const RUNS = Number(process.env.WSP_FUZZ_RUNS ?? 25);
const SEED = PROPERTY_SEED;

let version: { id: string; package_id: string };
let secretId: string;
let dashboard: { id: string; etag: string };

const headers = (extra: Record<string, string> = {}) => as(s.owner.session, s.workspaceId, extra);
async function call(method: string, url: string, payload?: unknown, extra: Record<string, string> = {}) {
  return h.app.inject({ method: method as 'GET', url, headers: headers(extra), ...(payload === undefined ? {} : { payload: payload as object }) });
}
async function ok(method: string, url: string, payload?: unknown, extra: Record<string, string> = {}) {
  const res = await call(method, url, payload, extra);
  assert.ok(res.statusCode >= 200 && res.statusCode < 300, `${method} ${url} -> ${res.statusCode} ${res.body}`);
  return res.statusCode === 204 ? null : res.json();
}

const h = useTestApp({
  setup: async () => {
    const pkg = await ok('POST', '/v1/packages', { name: 'echo' });
    version = await ok('POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { 'a.txt': '{{who}}' } });
    secretId = (await ok('POST', '/v1/secrets', { name: 'echo' })).id;
    dashboard = await ok('POST', '/v1/dashboards', { name: 'echo', purpose: 'custom', filter_definitions: [], default_filter_values: {}, widgets: [] });
  },
});
const s = h.seeded;

const SPECIAL = [
  '😀',
  '👩‍👩‍👧‍👦',
  '🏳️‍🌈',
  '\u{1F1E9}\u{1F1EA}',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
  '\u{10FFFF}',
  '\u{E0001}',
  'e\u0301',
  '\u0301',
  'Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d',
  '\u202eevil\u202c',
  '\u200f',
  '\u200d',
  '\u00a0',
  '\ufeff',
  '\ufffd',
  '\u2028',
  'עברית',
  'العربية',
  '日本語',
  '"',
  "'",
  '`',
  '\\',
  '\\u0000',
  '\\n',
  '${7*7}',
  '#{x}',
  '{{x}}',
  '{{{y}}}',
  '{{#a}}b{{/a}}',
  '<%= z %>',
  '<script>alert(1)</script>',
  "'; drop table api_tokens; --",
  '" or ""="',
  '%s%n%x',
  '%00',
  '\t',
  '\n',
  '\r\n',
  ' ',
  '__proto__',
  'constructor',
];
const piece = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...SPECIAL) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 6 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
);
/** Text for a field of at most `max` characters: pieces, plus the lengths at and past the limit in astral characters. */
const textFor = (max: number) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.array(piece, { maxLength: 10 }).map((a) => a.join('')) },
    { weight: 1, arbitrary: fc.constantFrom('😀'.repeat(max), '😀'.repeat(max + 1), `${'a'.repeat(max - 1)}é`, 'e\u0301'.repeat(Math.floor(max / 2)), '') },
  );

/** Code points, as JSON Schema's maxLength counts them. */
const length = (x: string) => [...x].length;
const storable = (x: string) => !/\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(x);
const within = (min: number, max: number) => (x: string) => storable(x) && length(x) >= min && length(x) <= max;

interface Field {
  name: string;
  max: number;
  valid: (x: string) => boolean;
  /** Sends the value; the response, and where a 422 must point. */
  write: (x: string, run: number) => Promise<{ res: Awaited<ReturnType<typeof call>>; paths: string[][] }>;
  /** Reads back what was accepted. */
  read: (written: any) => Promise<unknown>;
  /** Names unique in the workspace: a value sent again is 409 with this code. */
  unique?: number;
}

const FIELDS: Field[] = [
  {
    name: 'API token name',
    max: 100,
    valid: within(1, 100),
    write: async (x) => ({ res: await call('POST', '/v1/api_tokens', { name: x }), paths: [['body', 'name']] }),
    read: async (t) => {
      const list = await ok('GET', '/v1/api_tokens?limit=100');
      await ok('DELETE', `/v1/api_tokens/${t.id}`);
      return list.data.find((x: { id: string }) => x.id === t.id)?.name;
    },
  },
  {
    name: 'workspace name',
    max: 100,
    valid: within(1, 100),
    write: async (x) => ({ res: await call('PATCH', `/v1/workspaces/${s.workspaceId}`, { name: x }, { 'if-match': '*' }), paths: [['body', 'name']] }),
    read: async () => (await ok('GET', `/v1/workspaces/${s.workspaceId}`)).name,
  },
  {
    name: 'secret name',
    max: 100,
    valid: within(1, 100),
    write: async (x) => ({ res: await call('POST', '/v1/secrets', { name: x }), paths: [['body', 'name']] }),
    read: async (sec) => {
      const got = await ok('GET', `/v1/secrets/${sec.id}`);
      await ok('DELETE', `/v1/secrets/${sec.id}`, undefined, { 'if-match': got.etag });
      return got.name;
    },
  },
  {
    name: 'secret version comment',
    max: 200,
    valid: within(0, 200),
    write: async (x) => ({ res: await call('POST', `/v1/secrets/${secretId}/versions`, { data: 'AA==', comment: x }), paths: [['body', 'comment']] }),
    read: async (v) => (await ok('GET', `/v1/secrets/${secretId}/versions/${v.id}`)).comment,
  },
  {
    name: 'compute config name',
    max: 100,
    valid: within(1, 100),
    write: async (x) => ({ res: await call('POST', '/v1/compute/configs', { name: x, provider: 'hetzner', region: 'fsn1', image: 'ubuntu-24.04' }), paths: [['body', 'name']] }),
    read: async (c) => (await ok('GET', `/v1/compute/configs/${c.id}`)).name,
  },
  {
    name: 'package name',
    max: 100,
    valid: (x) => within(1, 100)(x) && !/[\u0000-\u001f\u007f]/.test(x),
    write: async (x) => ({ res: await call('POST', '/v1/packages', { name: x }), paths: [['body', 'name']] }),
    read: async (p) => (await ok('GET', `/v1/packages/${p.id}`)).name,
    unique: 7300,
  },
  {
    name: 'package template',
    max: 200,
    // Whether Mustache parses it is the template rule (7306); the text itself is kept as sent.
    valid: storable,
    write: async (x, run) => ({ res: await call('POST', `/v1/packages/${version.package_id}/versions`, { semver: `2.0.${run}`, files: { 't.txt': x } }), paths: [['body', 'files', 't.txt']] }),
    read: async (v) => (await ok('GET', `/v1/packages/${version.package_id}/versions/${v.id}`)).files['t.txt'],
  },
  {
    name: 'install name',
    max: 100,
    valid: (x) => within(1, 100)(x) && !/[\u0000-\u001f\u007f]/.test(x),
    write: async (x) => ({ res: await call('POST', '/v1/installs', { name: x, package_id: version.package_id, version_id: version.id, values: { who: 'x' } }), paths: [['body', 'name']] }),
    read: async (i) => (await ok('GET', `/v1/installs/${i.id}`)).name,
    unique: 7302,
  },
  {
    name: 'install value',
    max: 200,
    valid: storable,
    write: async (x) => ({
      res: await call('PATCH', `/v1/installs/${(await firstInstall()).id}`, { values: { who: x, list: [x] } }, { 'if-match': '*' }),
      paths: [
        ['body', 'values', 'who'],
        ['body', 'values', 'list', '0'],
      ],
    }),
    read: async (i) => {
      const got = await ok('GET', `/v1/installs/${i.id}`);
      assert.deepEqual(got.values.list, [got.values.who], 'an array item comes back as sent too');
      return got.values.who;
    },
  },
  {
    name: 'snippet name',
    max: 100,
    valid: within(1, 100),
    write: async (x) => ({ res: await call('POST', '/v1/snippets', { name: x, source: 'select 1' }), paths: [['body', 'name']] }),
    read: async (snp) => (await ok('GET', `/v1/snippets/${snp.id}`)).name,
  },
  {
    name: 'snippet source',
    max: 300,
    valid: within(1, 65536),
    write: async (x) => ({ res: await call('POST', '/v1/snippets', { name: 'n', source: x }), paths: [['body', 'source']] }),
    read: async (snp) => (await ok('GET', `/v1/snippets/${snp.id}`)).source,
  },
  {
    name: 'dashboard name',
    max: 100,
    valid: within(1, 100),
    write: async (x) => ({ res: await call('PATCH', `/v1/dashboards/${dashboard.id}`, { name: x }, { 'if-match': '*' }), paths: [['body', 'name']] }),
    read: async () => (await ok('GET', `/v1/dashboards/${dashboard.id}`)).name,
  },
  {
    name: 'dashboard description',
    max: 1000,
    valid: within(0, 1000),
    write: async (x) => ({ res: await call('PATCH', `/v1/dashboards/${dashboard.id}`, { description: x }, { 'if-match': '*' }), paths: [['body', 'description']] }),
    read: async () => (await ok('GET', `/v1/dashboards/${dashboard.id}`)).description,
  },
  {
    name: 'dashboard default filter value and revision summary',
    max: 1000,
    valid: within(0, 1000),
    write: async (x) => ({
      res: await call('PATCH', `/v1/dashboards/${dashboard.id}`, { default_filter_values: { v: x, n: Math.random() }, summary: x }, { 'if-match': '*' }),
      paths: [
        ['body', 'default_filter_values', 'v'],
        ['body', 'summary'],
      ],
    }),
    read: async (d) => {
      const rev = await ok('GET', `/v1/dashboards/${d.id}/revisions/${d.current_revision_id}`);
      assert.equal(rev.default_filter_values.v, rev.summary, 'the filter value comes back as sent too');
      return rev.summary;
    },
  },
];

async function firstInstall(): Promise<{ id: string }> {
  const list = await ok('GET', '/v1/installs?limit=100');
  if (list.data.length > 0) return list.data.at(-1);
  return ok('POST', '/v1/installs', { name: 'echo-target', package_id: version.package_id, version_id: version.id, values: { who: 'x' } });
}

for (const field of FIELDS) {
  test(`${field.name}: accepted exactly when valid, and read back byte for byte`, async () => {
    const seen = new Set<string>();
    let run = 0;
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(textFor(field.max), async (x) => {
        run++;
        const { res, paths } = await field.write(x, run);
        const where = `${field.name} ${JSON.stringify(x)} -> ${res.statusCode} ${res.body.slice(0, 300)}`;
        assert.ok(res.statusCode < 500, where);
        if (field.unique && field.valid(x) && seen.has(x)) {
          assert.equal(res.statusCode, 409, where);
          assert.equal(res.json().errors[0].code, field.unique, where);
          return;
        }
        if (field.name === 'package template' && res.statusCode === 422 && res.json().errors[0].code === 7306) return; // Mustache refused it
        if (!field.valid(x)) {
          assert.equal(res.statusCode, 422, where);
          const reported = res.json().errors.map((e: { path: string[] }) => JSON.stringify(e.path));
          // Every entry names one of the fields the text was sent in (a length rule may hold for only one of them).
          assert.ok(reported.length > 0 && reported.every((r: string) => paths.some((p) => JSON.stringify(p) === r)), where);
          return;
        }
        assert.ok(res.statusCode === 200 || res.statusCode === 201, where);
        seen.add(x);
        accepted++;
        const back = await field.read(res.json());
        assert.equal(back, x, `${where}\nread back: ${JSON.stringify(back)}`);
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    assert.ok(accepted > 0, 'some generated text was accepted');
  });
}
