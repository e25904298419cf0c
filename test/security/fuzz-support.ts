import { type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PROPERTY_SEED } from '../helpers/property.js';
import { createTestApp, type TestApp } from '../helpers/harness.js';
import { ErrorCodes } from '../../src/shared/errors.js';
import { GRANT, startLogin } from '../oauth/device-helpers.js';
import { buildTenant, documentRoutes, type DocRoute, type TenantFixture } from './tenant-fixture.js';
import { startProvider, type TestProvider } from '../helpers/oidc-provider.js';

/**
 * What the two fuzz files share (fuzz-routes: generated requests; fuzz-boundary: boundary
 * values one field at a time): the fixture, the generators, and the judge of every answer:
 * - the status is one the document lists for that route, never a 5xx, and never a hang;
 * - an error is the route's error shape: RFC 6749 `{error}` on the two OAuth endpoints (with
 *   RFC 6749's character set), the envelope (codes whose status is the answer's) everywhere else;
 * - answers are counted per route (status histogram, 5xx, past authentication, reaching the
 *   resource) and printed with t.diagnostic for docs/reliability.md.
 */
export const RUNS = Number(process.env.WSP_FUZZ_RUNS ?? 20);
/** WSP_FUZZ_ROUTE narrows a run to the routes whose `METHOD path` contains it (to replay a failure). */
export const ONLY = process.env.WSP_FUZZ_ROUTE;
export const SEED = PROPERTY_SEED;
/** No single request may take longer (a hang fails the test, it does not stall the run). */
const REQUEST_DEADLINE_MS = 20_000;
/** The OAuth endpoints answer RFC 6749 errors, not the envelope. */
const OAUTH_ENDPOINTS = new Set(['POST /v1/oauth/device_authorization', 'POST /v1/oauth/token']);
const STATUS_OF_CODE = new Map(Object.values(ErrorCodes).map((c) => [c.code as number, c.status as number]));

const SIGN_IN = { email: 'fuzz-sign-in@example.com', password: 'a fuzz password of length' };

export let h: TestApp;
let idp: TestProvider;

/** Closes the app and the provider. */
export async function fuzzTeardown(): Promise<void> {
  await h.close();
  await idp.close();
}
export let F: TenantFixture;
export let routes: DocRoute[];
let device: { device_code: string; user_code: string };

/** The app, a fixture workspace with one resource of every kind, a pending device login, the routes. */
export async function fuzzSetup(): Promise<void> {
  // Single sign-on on, against a real provider on loopback: its routes reach their handlers.
  idp = await startProvider('http://localhost:8080/v1/auth/oidc/callback');
  h = await createTestApp({ config: { publicUrl: 'http://localhost:8080', oidc: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, autoCreate: false } } });
  F = await buildTenant(h, 'Fuzz');
  device = await startLogin(h);
  // Someone who can sign in with a password (POST /v1/sessions reaches its handler).
  const { user_id } = await h.admin.createUser({ name: 'Fuzz sign-in', email: SIGN_IN.email });
  await h.admin.setPassword(user_id, SIGN_IN.password);
  // Mutating routes last, deletions at the very end: the fixture's resources stay for the reads.
  const rank = (r: DocRoute) => (r.method === 'DELETE' ? 2 : r.method === 'GET' ? 0 : 1);
  routes = documentRoutes(h)
    .sort((a, b) => rank(a) - rank(b))
    .filter((r) => !ONLY || r.key.includes(ONLY));
}

/** Races a request against a deadline whose timer is always cleared. */
export async function withDeadline<T>(what: string, work: Promise<T>, ms = REQUEST_DEADLINE_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`hang (over ${ms} ms): ${what}`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

export const HUGE = ['x'.repeat(100_000), '\u{1F600}'.repeat(25_000), `${'\u0000'.repeat(100)}${'é'.repeat(50_000)}`, '{{#a}}'.repeat(10_000)];
export const NASTY = [
  '',
  ' ',
  '\u0000',
  '..',
  '../../etc/passwd',
  "' or 1=1 --",
  '"; drop table users; --',
  '{{#x}}{{/x}}{{{y}}}',
  '${7*7}',
  '<%= 7*7 %>',
  '__proto__',
  'constructor',
  'prototype',
  '%00',
  '%2e%2e%2f',
  '\u202e\u0301😀',
  '\ud800',
  'ws_',
  'a'.repeat(54),
  'a'.repeat(55),
  'a'.repeat(600),
];
/**
 * An arbitrary made on first use, then the very same one: generates and shrinks exactly as
 * `make()`'s would. fast-check builds a grapheme or binary string arbitrary eagerly (a reverse
 * mapping of every grapheme: about a second of CPU), which a file that imports this one but
 * never generates text (fuzz-boundary) should not pay.
 */
class Lazy<T> extends fc.Arbitrary<T> {
  #made: fc.Arbitrary<T> | undefined;
  constructor(private readonly make: () => fc.Arbitrary<T>) {
    super();
  }
  private get made(): fc.Arbitrary<T> {
    return (this.#made ??= this.make());
  }
  generate(mrng: fc.Random, biasFactor: number | undefined): fc.Value<T> {
    return this.made.generate(mrng, biasFactor);
  }
  canShrinkWithoutContext(value: unknown): value is T {
    return this.made.canShrinkWithoutContext(value);
  }
  shrink(value: T, context: unknown): fc.Stream<fc.Value<T>> {
    return this.made.shrink(value, context);
  }
}

const nasty = fc.constantFrom(...NASTY);
export const huge = fc.constantFrom(...HUGE);
export const text = fc.oneof(
  { weight: 3, arbitrary: nasty },
  { weight: 3, arbitrary: fc.string({ maxLength: 80 }) },
  { weight: 2, arbitrary: new Lazy(() => fc.string({ unit: 'grapheme', maxLength: 40 })) },
  { weight: 2, arbitrary: new Lazy(() => fc.string({ unit: 'binary', maxLength: 40 })) },
  { weight: 1, arbitrary: huge },
);

const deep = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
const RAW_JSON = [
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  deep(200),
  deep(5000),
  '['.repeat(500) + ']'.repeat(500),
  '{"name":',
  'null',
  '""',
  '[]',
  '{}',
  '1e999',
  '{"name":"\\u0000"}',
  '{"name":"\\ud800"}',
  '\ufeff{}',
  `{"name":"${'x'.repeat(100_000)}"}`,
];

/** Values that make a field name a real resource or a real choice, used most of the time. */
export function hints(): Record<string, fc.Arbitrary<unknown>> {
  const now = Math.floor(h.clock.nowMs() / 1000);
  return {
    package_id: fc.constant(F.ids.package),
    version_id: fc.constant(F.ids.packageVersion),
    desired_version_id: fc.constant(F.ids.packageVersion),
    render_id: fc.constant(F.ids.render),
    compute_config_id: fc.constant(F.ids.computeConfig),
    cluster_id: fc.constant(F.ids.cluster),
    secret_id: fc.constant(F.ids.secret),
    snippet_id: fc.constant(F.ids.snippet),
    region: fc.constant('fsn1'),
    image: fc.constant('ubuntu-24.04'),
    server_type: fc.constant('cx22'),
    machine_type_filter: fc.constantFrom('*', 'cx*', 'cx2?'),
    // A public address (the address policy refuses private ones); no job runs, so it is never called.
    url: fc.constantFrom('https://93.184.216.34/fuzz', 'https://93.184.216.34/a/b?c=d'),
    event_types: fc.constantFrom(['secret.*'], ['snippet.created', 'dashboard.*']),
    data: fc.oneof(fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.constant(new Uint8Array(48 * 1024).fill(7))).map((b) => Buffer.from(b).toString('base64')),
    expires_at: fc.integer({ min: now + 60, max: now + 10 ** 7 }),
    semver: fc.nat({ max: 10 ** 6 }).map((n) => `2.${n}.0`),
    files: fc.dictionary(fc.constantFrom('a.txt', 'dir/b.txt', 'c.md'), fc.oneof(text, fc.constant('Hello {{who}}')), { minKeys: 1, maxKeys: 3 }),
    values: fc.dictionary(fc.constantFrom('who', 'x', 'nested'), fc.oneof(text, fc.jsonValue({ maxDepth: 2 })), { maxKeys: 3 }),
    client_id: fc.constant('wsp-cli'),
    grant_type: fc.constant(GRANT),
    device_code: fc.constant(device.device_code),
    user_code: fc.constantFrom(device.user_code, device.user_code.toLowerCase().replace('-', '')),
  };
}

/**
 * Well-formed values of query parameters whose schema alone does not make a request that reaches
 * the handler: a platform metric's series takes a range (from before to, few enough points) and
 * only the filters that metric has (the fixed path names `writes`: `type`).
 */
export function queryHints(): Record<string, fc.Arbitrary<string | undefined>> {
  const now = Math.floor(h.clock.nowMs() / 1000);
  return {
    from: fc.integer({ min: now - 86_400, max: now - 3600 }).map(String),
    to: fc.constantFrom(String(now), undefined),
    step: fc.integer({ min: 300, max: 3600 }).map(String),
    version: fc.constant('1'),
    type: fc.constantFrom('secret.created', 'dashboard.*', undefined),
    install: fc.constant(undefined),
    cluster: fc.constant(undefined),
    region: fc.constant(undefined),
    status: fc.constant(undefined),
  };
}

/**
 * One well-formed value for each field `hints` knows (an existing resource of the fixture, a
 * choice the provider offers, the pending device login's codes): what a request that must get
 * past validation, to its handler, sends in that field.
 */
export function wellFormed(): Record<string, unknown> {
  const now = Math.floor(h.clock.nowMs() / 1000);
  return {
    package_id: F.ids.package,
    version_id: F.ids.packageVersion,
    desired_version_id: F.ids.packageVersion,
    render_id: F.ids.render,
    compute_config_id: F.ids.computeConfig,
    cluster_id: F.ids.cluster,
    secret_id: F.ids.secret,
    snippet_id: F.ids.snippet,
    region: 'fsn1',
    image: 'ubuntu-24.04',
    server_type: 'cx22',
    machine_type_filter: 'cx*',
    url: 'https://93.184.216.34/fuzz',
    event_types: ['secret.*'],
    data: Buffer.from('a well-formed payload').toString('base64'),
    expires_at: now + 3600,
    semver: '3.0.0',
    files: { 'a.txt': 'Hello {{who}}' },
    values: { who: 'boundary' },
    client_id: 'wsp-cli',
    grant_type: GRANT,
    device_code: device.device_code,
    user_code: device.user_code,
    role: 'member',
    email: SIGN_IN.email,
    password: SIGN_IN.password,
  };
}

type Schema = Record<string, any>;

function regexArb(pattern: string, min: number, max: number): fc.Arbitrary<string> | null {
  try {
    const re = new RegExp(pattern, 'u');
    return fc.stringMatching(re).filter((s) => [...s].length >= min && [...s].length <= max && re.test(s));
  } catch {
    return null;
  }
}

/** A value shaped by a JSON schema: usually valid, sometimes a boundary or a near miss. */
function shaped(schema: Schema | undefined, key: string | undefined, depth: number, hint: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<unknown> {
  const own = shapedBySchema(schema, depth, hint);
  if (key && hint[key]) return fc.oneof({ weight: 3, arbitrary: hint[key] }, { weight: 1, arbitrary: own });
  return own;
}

export function shapedBySchema(schema: Schema | undefined, depth: number, hint: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return fc.jsonValue({ maxDepth: 2 });
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  if ('const' in schema) return fc.constant(schema.const);
  const branches = schema.oneOf ?? schema.anyOf;
  if (Array.isArray(branches) && branches.length > 0) return fc.oneof(...branches.map((b: Schema) => shapedBySchema({ ...schema, oneOf: undefined, anyOf: undefined, ...b }, depth + 1, hint)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string': {
      const min = schema.minLength ?? 0;
      const max = schema.maxLength ?? 200_000;
      const fromPattern = schema.pattern ? regexArb(schema.pattern, min, max) : null;
      // Near misses (any text) only at the top: deeper, one bad leaf would spoil every body.
      const miss = depth <= 1 ? 1 : 0;
      if (fromPattern) return fc.oneof({ weight: 4, arbitrary: fromPattern }, { weight: miss, arbitrary: text });
      const fits = (s: string) => s.length >= min && s.length <= max;
      return fc.oneof(
        { weight: 3, arbitrary: fc.string({ unit: 'grapheme', minLength: Math.max(min, 1), maxLength: Math.min(max, 60) }).filter(fits) },
        { weight: 2, arbitrary: text.filter(fits) },
        { weight: miss, arbitrary: text },
      );
    }
    case 'integer':
    case 'number': {
      const min = typeof schema.minimum === 'number' ? schema.minimum : -(2 ** 40);
      const max = typeof schema.maximum === 'number' ? schema.maximum : 2 ** 40;
      return fc.oneof(
        { weight: 4, arbitrary: fc.integer({ min: Math.max(min, -(2 ** 40)), max: Math.min(max, 2 ** 40) }) },
        { weight: 1, arbitrary: fc.constantFrom(min, max) },
        { weight: depth <= 1 ? 1 : 0, arbitrary: fc.constantFrom(min - 1, max + 1, 0.5, -0) },
      );
    }
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const min = schema.minItems ?? 0;
      const max = Math.max(min, Math.min(schema.maxItems ?? 2, 2));
      return fc.array(shapedBySchema(schema.items, depth + 1, hint), { minLength: min, maxLength: max });
    }
    case 'object': {
      const props: Record<string, Schema> = schema.properties ?? {};
      const keys = Object.keys(props);
      if (keys.length === 0) {
        if (schema.additionalProperties === false) return fc.constant({});
        const values = typeof schema.additionalProperties === 'object' ? shapedBySchema(schema.additionalProperties, depth + 1, hint) : fc.jsonValue({ maxDepth: 2 });
        return fc.dictionary(fc.oneof(fc.constantFrom('a', 'b.txt', 'dir/c'), fc.string({ minLength: 1, maxLength: 20 })), values, { minKeys: schema.minProperties ?? 0, maxKeys: 3 });
      }
      const required = new Set<string>(schema.required ?? []);
      const record = Object.fromEntries(keys.map((k) => [k, shaped(props[k], k, depth + 1, hint)]));
      return fc.record(record, { requiredKeys: keys.filter((k) => required.has(k)) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** A body shaped by the route's schema, in its first media type (a tame case's body). */
export function tameBodyArb(route: DocRoute, hint: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<string | Buffer> {
  const content = route.op.requestBody?.content ?? {};
  const media = Object.keys(content);
  if (media[0] === 'application/x-git-upload-pack-request') return fc.constantFrom('0000', '0009done\n0000');
  const valid = shapedBySchema((content['application/json'] ?? content[media[0]!])?.schema, 0, hint);
  if (media[0] === 'application/x-www-form-urlencoded') return valid.map(toForm);
  return valid.map((v) => JSON.stringify(v) ?? 'null');
}

const toForm = (v: unknown) => new URLSearchParams(Object.entries(v !== null && typeof v === 'object' ? v : {}).map(([k, x]) => [k, typeof x === 'string' ? x : JSON.stringify(x)])).toString();

/** Bodies for a route: shaped by its schema, shaped garbage, any JSON, raw text; as its media type wants. */
export function bodyArb(route: DocRoute, hint: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<string | Buffer> {
  const content = route.op.requestBody?.content ?? {};
  const media = Object.keys(content);
  if (media.includes('application/x-git-upload-pack-request')) {
    return fc.oneof(
      fc.constantFrom('0000', '0009done\n0000', '0032want 0000000000000000000000000000000000000000\n0000', 'zzzz', ''),
      fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
      huge,
    );
  }
  const schema = (content['application/json'] ?? content[media[0]!])?.schema;
  const keys = Object.keys(schema?.properties ?? {});
  const valid = shapedBySchema(schema, 0, hint);
  const garbage = keys.length
    ? fc.dictionary(fc.constantFrom(...keys, '__proto__', 'constructor', 'extra'), fc.oneof(fc.jsonValue({ maxDepth: 3 }), text), { maxKeys: keys.length + 1 })
    : fc.jsonValue({ maxDepth: 3 });
  const asJson = fc.oneof({ weight: 5, arbitrary: valid }, { weight: 2, arbitrary: garbage }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) }).map((v) => JSON.stringify(v) ?? 'null');
  const raw = fc.constantFrom(...RAW_JSON);
  if (media.includes('application/x-www-form-urlencoded')) {
    const form = fc.oneof({ weight: 3, arbitrary: valid }, { weight: 1, arbitrary: garbage }).map(toForm);
    return fc.oneof({ weight: 4, arbitrary: form }, { weight: 1, arbitrary: asJson }, { weight: 1, arbitrary: raw });
  }
  return fc.oneof({ weight: 6, arbitrary: asJson }, { weight: 1, arbitrary: raw });
}

export type Credential = 'owner' | 'admin' | 'member' | 'token' | 'fuzzed' | 'none';

/** The Authorization header of a case (a route that ends a session always gets a session of its own). */
export async function authorizationOf(route: DocRoute, credential: Credential, fuzzed: string): Promise<string | undefined> {
  const seed = F.seed;
  if (credential === 'none') return undefined;
  if (credential === 'fuzzed') return fuzzed;
  if (credential === 'token') return `Bearer ${seed.apiToken}`;
  const user = { owner: seed.owner, admin: seed.admin, member: seed.member }[credential];
  if (route.key === 'DELETE /v1/sessions/current' || route.key === 'DELETE /v1/sessions/{id}') return `Bearer ${(await h.admin.createSession(user.userId)).session_token}`;
  return `Bearer ${user.session}`;
}

/** A path id as one segment, percent-encoded. */
export const segment = (id: string) => encodeURIComponent(id);
/** A lone surrogate has no percent-encoding: no client can put it in a URL. */
export const sendableId = (id: string) => !/[\ud800-\udfff]/.test(id.replace(/[\ud800-\udbff][\udc00-\udfff]/g, ''));
/**
 * Ids with which the URL names another route, or none: empty (`//`), `.` or `..` (even as
 * `%2E%2E`: dot segments every URL parser resolves away), and, on a custom method's path
 * (`{id}:reset`), one holding `:` (the router decodes `%3A` before it splits the method off;
 * no id of the API holds a `:`). Their answer is the router's: 404 (7000) or 405 (7001).
 */
export const reroutes = (route: DocRoute, ids: readonly string[]) => ids.some((id) => id === '' || /^\.{1,2}$/.test(id) || (/\}:[a-z]/.test(route.path) && id.includes(':')));

export const headerSafe = (v: string | undefined) => v !== undefined && /^[\t\x20-\x7e\x80-\xff]*$/.test(v);

interface Tally {
  statuses: Map<number, number>;
  cases: number;
  fiveHundreds: number;
  /** Answers past authentication (anything but 401). */
  authenticated: number;
  /** Answers from the resource itself: 2xx, 409, a 404 of a body field, an OAuth grant answer. */
  reached: number;
  /** A few answers that did not reach the resource, for the failure message. */
  samples: string[];
  /** Answers of the router to a path the ids turned into another route's (see `reroutes`). */
  rerouted: number;
}
export const tallies = new Map<string, Tally>();
export function tally(route: DocRoute): Tally {
  let t = tallies.get(route.key);
  if (!t) tallies.set(route.key, (t = { statuses: new Map(), cases: 0, fiveHundreds: 0, authenticated: 0, reached: 0, samples: [], rerouted: 0 }));
  return t;
}

/** Checks one answer against the route's document and error shape; counts it. */
export function judge(route: DocRoute, res: { statusCode: number; body: string; headers: Record<string, unknown> }, where: string, rerouted = false): void {
  const t = tally(route);
  t.cases++;
  t.statuses.set(res.statusCode, (t.statuses.get(res.statusCode) ?? 0) + 1);
  if (res.statusCode >= 500) t.fiveHundreds++;
  assert.ok(res.statusCode < 500, `a 5xx: ${where}`);
  if (rerouted && (res.statusCode === 404 || res.statusCode === 405) && !route.documented.has(res.statusCode)) {
    const code = (JSON.parse(res.body) as { errors?: { code?: number }[] }).errors?.[0]?.code;
    assert.equal(code, res.statusCode === 404 ? 7000 : 7001, `the router's answer: ${where}`);
    t.rerouted++;
  } else assert.ok(route.documented.has(res.statusCode), `status ${res.statusCode} is not among the route's documented ${[...route.documented].join(', ')}: ${where}`);
  assert.ok(!/at .*\.(ts|js):\d+|SQLITE_|syntax error at|relation "|node_modules/i.test(res.body), `leaks internals: ${where}`);
  if (res.statusCode !== 401) t.authenticated++;
  const before = t.reached;
  try {
    shapeOf(route, res, where, t);
  } finally {
    if (t.reached === before && t.samples.length < (ONLY ? 100 : 12)) t.samples.push(`${res.statusCode} ${res.body.slice(0, 160)}`);
  }
}

function shapeOf(route: DocRoute, res: { statusCode: number; body: string; headers: Record<string, unknown> }, where: string, t: Tally): void {
  const json = String(res.headers['content-type'] ?? '').includes('application/json') ? (JSON.parse(res.body) as Record<string, any>) : null;
  if (OAUTH_ENDPOINTS.has(route.key)) {
    if (res.statusCode >= 400) {
      assert.ok(json && typeof json.error === 'string' && /^[\x20-\x21\x23-\x5b\x5d-\x7e]+$/.test(json.error), `not an RFC 6749 error: ${where}`);
      assert.deepEqual(
        Object.keys(json).filter((k) => !['error', 'error_description', 'error_uri'].includes(k)),
        [],
        `an RFC 6749 error has only error, error_description, error_uri: ${where}`,
      );
      if (json.error_description !== undefined) assert.match(json.error_description, /^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/, `error_description outside RFC 6749's characters: ${where}`);
      if (json.error !== 'invalid_request') t.reached++;
    } else t.reached++;
    return;
  }
  if (res.statusCode >= 400) {
    assert.ok(json, `an error that is not JSON: ${where}`);
    assert.equal(json.success, false, `not the envelope: ${where}`);
    assert.deepEqual(json.result, {}, `not the envelope: ${where}`);
    assert.ok(Array.isArray(json.errors), `not the envelope: ${where}`);
    const tagged = res.statusCode === 401 && json.errors.length === 0;
    if (tagged) assert.equal(json._tag, 'Unauthorized', where);
    else {
      assert.deepEqual(Object.keys(json).sort(), ['errors', 'result', 'success'], `the envelope has no other fields: ${where}`);
      assert.ok(json.errors.length > 0, `an envelope without errors: ${where}`);
    }
    for (const e of json.errors) {
      assert.equal(typeof e.code, 'number', where);
      assert.equal(typeof e.message, 'string', where);
      assert.equal(STATUS_OF_CODE.get(e.code), res.statusCode, `code ${e.code} is not a ${res.statusCode} code: ${where}`);
      if (e.path !== undefined) assert.ok(Array.isArray(e.path) && e.path.every((p: unknown) => typeof p === 'string'), `path is an array of strings: ${where}`);
    }
    // 409, 410 (an invitation used, the first-run setup done), a failed sign-in's 401 (7044), a
    // refused single sign-on callback's 400 (7052) and a failed preview's 422 (7310) are a
    // handler's verdicts.
    const signInFailed = (res.statusCode === 401 && json.errors[0]?.code === 7044) || (res.statusCode === 400 && json.errors[0]?.code === 7052);
    // A preview whose render failed on the values sent: the handler rendered.
    const renderFailed = res.statusCode === 422 && json.errors[0]?.code === 7310;
    // The notification stream's handler refusing a client that does not accept text/event-stream
    // (an injected request cannot hold a stream open: test/notifications/stream.test.ts streams).
    const notAcceptable = res.statusCode === 406 && json.errors[0]?.code === 7026;
    // The fixture's change request is its owner's: the handler found it and refused its author's approval.
    const authorRefused = res.statusCode === 403 && json.errors[0]?.code === 7333;
    if (res.statusCode === 409 || res.statusCode === 410 || signInFailed || renderFailed || notAcceptable || authorRefused || (res.statusCode === 404 && json.errors[0]?.path?.[0] === 'body'))
      t.reached++;
    return;
  }
  t.reached++;
}

/** A write's answer shows each string field it accepted exactly as it was sent. */
export function echoes(sent: unknown, res: { statusCode: number; body: string; headers: Record<string, unknown> }, where: string): void {
  if (res.statusCode < 200 || res.statusCode >= 300 || sent === null || typeof sent !== 'object' || Array.isArray(sent)) return;
  if (!String(res.headers['content-type'] ?? '').includes('application/json')) return;
  const answer = JSON.parse(res.body) as Record<string, unknown>;
  for (const [k, v] of Object.entries(sent)) {
    // Ids and codes come back canonical (prefixed ids, upper-case user codes): not echoes.
    if (typeof v !== 'string' || k.endsWith('_id') || k === 'user_code' || k === 'data') continue;
    if (typeof answer[k] === 'string') assert.equal(answer[k], v, `${k} did not come back byte for byte: ${where}`);
  }
}

export function report(t: TestContext, title: string): void {
  let cases = 0;
  let fives = 0;
  for (const route of routes) {
    const x = tallies.get(route.key);
    assert.ok(x, `${route.key} was never called`);
    cases += x.cases;
    fives += x.fiveHundreds;
    const histogram = [...x.statuses]
      .sort(([a], [b]) => a - b)
      .map(([s, n]) => `${s}x${n}`)
      .join(' ');
    t.diagnostic(`${title} ${route.key}: ${x.cases} cases, 5xx ${x.fiveHundreds}, authenticated ${x.authenticated}, reached ${x.reached}${x.rerouted ? `, rerouted ${x.rerouted}` : ''}; ${histogram}`);
  }
  t.diagnostic(`${title} total: ${routes.length} routes, ${cases} cases, 5xx ${fives}`);
  tallies.clear();
}
