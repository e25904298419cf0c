/**
 * The last pass over the OpenAPI document @fastify/swagger builds from the routes, so that
 * generators and linters take it as it is:
 * - a schema with a `title` (the resources: `Dashboard`, `Secret`, ...) becomes
 *   `components.schemas[title]` and every place it appeared a `$ref` to it, so generated clients
 *   get one named type per resource, not one anonymous copy per operation;
 * - a `oneOf` with a `discriminator` gets the `mapping` from each variant's tag value (ajv
 *   validates without one and refuses `mapping`, so the routes' schemas cannot carry it);
 * - TypeBox's tuple (`items: [...]`, draft 7) is written as OpenAPI 3.1's `prefixItems`;
 * - every request body and response without an example gets one built from its schema
 *   (`exampleOf`), from the `examples` the schemas carry where a value must match a pattern.
 * Nothing here changes what a route accepts or answers: validation uses the routes' schemas.
 */

import { FIELD_DESCRIPTIONS, GLOSSARY } from './openapi-descriptions.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON document walked without a schema; each reader checks the shape it needs
type Json = Record<string, any>;

/** Keys whose values are data, not schemas: never walked for titles. */
const DATA_KEYS = new Set(['examples', 'example', 'default', 'const', 'enum']);

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

const stable = (v: unknown): string =>
  Array.isArray(v)
    ? `[${v.map(stable).join(',')}]`
    : isObject(v)
      ? `{${Object.keys(v)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${stable(v[k])}`)
          .join(',')}}`
      : JSON.stringify(v);

function transformTree(node: unknown, visit: (n: Json) => Json): unknown {
  if (Array.isArray(node)) return node.map((n) => transformTree(n, visit));
  if (!isObject(node)) return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) out[k] = DATA_KEYS.has(k) ? v : transformTree(v, visit);
  return visit(out);
}

const isSchema = (n: Json) => typeof n.title === 'string' && ('type' in n || 'oneOf' in n || 'anyOf' in n || 'allOf' in n || '$ref' in n);

/**
 * Moves titled schemas to components.schemas. The walk is bottom-up, so a resource's own titled
 * parts are references already when it is stored. Two different schemas under one title are a
 * mistake in the routes, refused at start-up; a use with its own description keeps it beside the $ref.
 */
function hoistTitled(doc: Json): void {
  const named: Json = {};
  const hoist = (n: Json): Json => {
    if (!isSchema(n)) return n;
    const name = n.title as string;
    const { description, ...shape } = n;
    const first = named[name];
    if (first) {
      const { description: firstDescription, ...firstShape } = first;
      if (stable(firstShape) !== stable(shape)) throw new Error(`OpenAPI: two different schemas are titled "${name}"`);
      return { $ref: `#/components/schemas/${name}`, ...(description && description !== firstDescription ? { description } : {}) };
    }
    named[name] = n;
    return { $ref: `#/components/schemas/${name}` };
  };
  doc.paths = transformTree(doc.paths, hoist);
  doc.components = doc.components ?? {};
  const existing = transformTree(doc.components.schemas ?? {}, hoist) as Json;
  const all: Json = { ...existing, ...named };
  doc.components.schemas = Object.fromEntries(
    Object.keys(all)
      .sort()
      .map((k) => [k, all[k]]),
  );
}

function resolve(doc: Json, node: Json): Json {
  let n = node;
  for (let i = 0; i < 10 && typeof n.$ref === 'string'; i++) {
    const name = n.$ref.replace('#/components/schemas/', '');
    n = doc.components?.schemas?.[name] ?? {};
  }
  return n;
}

function discriminatorMappings(doc: Json): void {
  const map = (n: Json): Json => {
    if (!isObject(n.discriminator) || !Array.isArray(n.oneOf) || n.discriminator.mapping) return n;
    const tag = n.discriminator.propertyName as string;
    const mapping: Record<string, string> = {};
    for (const variant of n.oneOf as Json[]) {
      if (typeof variant.$ref !== 'string') return n;
      const prop = resolve(doc, variant).properties?.[tag];
      const value = prop?.const ?? (Array.isArray(prop?.enum) && prop.enum.length === 1 ? prop.enum[0] : undefined);
      if (typeof value !== 'string') return n;
      mapping[value] = variant.$ref;
    }
    return { ...n, discriminator: { ...n.discriminator, mapping } };
  };
  doc.paths = transformTree(doc.paths, map);
  doc.components.schemas = transformTree(doc.components.schemas, map);
}

function tuplesAsPrefixItems(doc: Json): void {
  const fix = (n: Json): Json => {
    if (!Array.isArray(n.items)) return n;
    const { items, additionalItems: _a, ...rest } = n;
    return { ...rest, prefixItems: items };
  };
  doc.paths = transformTree(doc.paths, fix);
  doc.components.schemas = transformTree(doc.components.schemas, fix);
}

const FORMAT_SAMPLES: Record<string, string> = {
  'date-time': '2026-11-26T09:30:00Z',
  date: '2026-11-26',
  email: 'ada@example.com',
  uri: 'https://wsp.example.com/console/',
  url: 'https://wsp.example.com/console/',
  uuid: '0f8fad5b-d9cb-469f-a165-70867728950e',
  byte: 'c2VjcmV0IHZhbHVl',
};

/** The id prefix of each resource, for an `id` that reads like one. */
const ID_PREFIX: Record<string, string> = {
  Dashboard: 'dash',
  DashboardRevision: 'drev',
  Snippet: 'snp',
  Secret: 'sec',
  SecretVersion: 'secv',
  AccessedVersion: 'secv',
  Package: 'pkg',
  PackageVersion: 'pkgv',
  PackageVersionSummary: 'pkgv',
  Install: 'inst',
  RestoredInstall: 'inst',
  Render: 'rnd',
  ComputeConfig: 'cc',
  Machine: 'mch',
  Suspension: 'susp',
  Operation: 'op',
  Notification: 'ntf',
  Workspace: 'ws',
  Invitation: 'inv',
  CreatedInvitation: 'inv',
  ListedToken: 'tok',
  CreatedToken: 'tok',
  ListedSession: 'ses',
  Webhook: 'wh',
  CreatedWebhook: 'wh',
  Delivery: 'whd',
  AuditEvent: 'evt',
};

/** What a field named so refers to. */
const REF_PREFIX: Record<string, string> = {
  workspace_id: 'ws',
  user_id: 'usr',
  actor_id: 'usr',
  author_id: 'usr',
  install_id: 'inst',
  render_id: 'rnd',
  restored_from_render_id: 'rnd',
  package_id: 'pkg',
  version_id: 'pkgv',
  package_version_id: 'pkgv',
  desired_version_id: 'pkgv',
  secret_id: 'sec',
  webhook_id: 'wh',
  dashboard_id: 'dash',
  current_revision_id: 'drev',
  parent_revision_id: 'drev',
  restored_from_revision_id: 'drev',
  snippet_id: 'snp',
  widget_id: 'wdg',
  compute_config_id: 'cc',
  cluster_id: 'cl',
  operation_id: 'op',
  suspension_id: 'susp',
  session_id: 'ses',
  machine_id: 'mch',
};

/** Plain words for the fields every reader meets first, so that an example reads like a real answer. */
const WORDS: Record<string, string> = {
  name: 'Production',
  title: 'Error rate',
  label: 'Region',
  description: 'Checkout service, EU region',
  summary: 'Widen the error rate chart',
  comment: 'Rotated after the quarterly review',
  message: 'Rendered 2 files',
  hostname: 'web-1',
  email: 'ada@example.com',
  url: 'https://hooks.example.com/wsp',
  etag: 'hP3kXb8QzR1mN2vYt0aL',
  source: 'select count(*) from errors',
  snippet_etag: 'Qm9vdHN0cmFwcGVkAAA',
  provider: 'hetzner',
  region: 'fsn1',
  location: 'fsn1',
  image: 'debian-12',
  server_type: 'cx22',
  ipv4: '203.0.113.10',
  ip: '203.0.113.7',
  user_agent: 'wsp-cli/1.0.0',
  drill_down: 'https://grafana.example.com/d/errors',
  clone_url: 'https://wsp.example.com/v1/installs/inst_01jdzk3q8f4n6w2m5t7v9x1c3b/repository.git',
};

/** A time in the examples: 2025-11-26T10:00:00Z. */
const EXAMPLE_TIME = 1_764_151_200;

/** A sample for a string field from its name, when it fits the schema's bounds. */
function namedSample(s: Json, name: string | undefined, owner: string | undefined): string | undefined {
  if (!name) return undefined;
  const prefix = name === 'id' && owner ? ID_PREFIX[owner] : REF_PREFIX[name];
  const sample = prefix ? `${prefix}_01jdzk3q8f4n6w2m5t7v9x1c3b` : WORDS[name];
  if (sample === undefined) return undefined;
  const fits = sample.length >= (s.minLength ?? 0) && sample.length <= (s.maxLength ?? Infinity) && !s.format;
  return fits ? sample : undefined;
}

/**
 * A value valid against `schema`: its own example where it has one (a pattern-bound string
 * always does: `patterned` asks for one), else built from its type and bounds, with ids, times
 * and names that read like the real thing. Optional properties are shown too, so that the
 * example is a tour of the resource. `name` and `owner` are the property and the component it
 * is a property of.
 */
export function exampleOf(doc: Json, schema: Json, depth = 0, name?: string, owner?: string): unknown {
  const s = resolve(doc, schema);
  const component = typeof schema.$ref === 'string' ? schema.$ref.replace('#/components/schemas/', '') : owner;
  if (Array.isArray(s.examples) && s.examples.length) return s.examples[0];
  if ('example' in s) return s.example;
  if ('const' in s) return s.const;
  if ('default' in s) return s.default;
  if (Array.isArray(s.enum)) return s.enum[0];
  const variants = (s.oneOf ?? s.anyOf) as Json[] | undefined;
  if (variants) {
    const chosen = variants.find((v) => resolve(doc, v).type !== 'null') ?? variants[0]!;
    return exampleOf(doc, chosen, depth + 1, name, component);
  }
  if (Array.isArray(s.allOf)) return Object.assign({}, ...s.allOf.map((p: Json) => exampleOf(doc, p, depth + 1, name, component)));
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type;
  switch (type) {
    case 'object': {
      const out: Json = {};
      if (depth > 8) return out;
      for (const [k, v] of Object.entries((s.properties ?? {}) as Json)) out[k] = exampleOf(doc, v, depth + 1, k, component);
      return out;
    }
    case 'array': {
      if (Array.isArray(s.prefixItems)) return s.prefixItems.map((p: Json) => exampleOf(doc, p, depth + 1, undefined, component));
      if (depth > 8 || !s.items) return [];
      const one = exampleOf(doc, s.items, depth + 1, undefined, component);
      return Array.from({ length: Math.max(1, s.minItems ?? 1) }, () => one).slice(0, s.uniqueItems ? 1 : undefined);
    }
    case 'integer':
    case 'number': {
      const inRange = (n: number) => n >= (s.minimum ?? -Infinity) && n <= (s.maximum ?? Infinity);
      if (name && /(^|_)at$/.test(name) && inRange(EXAMPLE_TIME)) return EXAMPLE_TIME;
      return typeof s.minimum === 'number' ? Math.max(s.minimum, Math.min(1, s.maximum ?? 1)) : typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + 1 : 1;
    }
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'string': {
      if (typeof s.pattern === 'string') throw new Error(`OpenAPI: a string with pattern ${s.pattern} has no example (give patterned() one)`);
      const named = namedSample(s, name, component);
      if (named !== undefined) return named;
      const sample = FORMAT_SAMPLES[s.format as string] ?? 'string';
      const min = s.minLength ?? 0;
      const padded = sample.length >= min ? sample : sample.padEnd(min, 'x');
      return typeof s.maxLength === 'number' ? padded.slice(0, s.maxLength) : padded;
    }
    default:
      return {};
  }
}

function mediaExamples(doc: Json): void {
  const withExample = (media: Json | undefined) => {
    if (!media) return;
    for (const m of Object.values(media) as Json[]) {
      if (!isObject(m.schema) || 'example' in m || 'examples' in m) continue;
      const value = exampleOf(doc, m.schema);
      if (value !== undefined) m.example = value;
    }
  };
  for (const item of Object.values<Json>(doc.paths ?? {})) {
    for (const op of Object.values(item) as Json[]) {
      if (!isObject(op)) continue;
      withExample(op.requestBody?.content);
      for (const r of Object.values<Json>(op.responses ?? {})) withExample(r.content);
    }
  }
}

/**
 * An operation that answers only with a redirect (the browser's steps of single sign-on) gets a
 * `default` response, the envelope of any error, so that it still says what a client receives.
 */
function defaultForRedirects(doc: Json): void {
  for (const item of Object.values<Json>(doc.paths ?? {})) {
    for (const op of Object.values(item) as Json[]) {
      const codes = Object.keys(op?.responses ?? {});
      if (!codes.length || codes.some((c) => c.startsWith('2') || c === 'default')) continue;
      if (!codes.some((c) => c.startsWith('3'))) continue;
      op.responses.default = { description: 'Any other error, in the envelope', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } } };
    }
  }
}

const globRegex = (glob: string) => new RegExp(`^${glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[A-Za-z]*')}$`);
const OVERLAY = Object.entries(FIELD_DESCRIPTIONS).map(([key, text]) => {
  const at = key.startsWith('get ') || key.startsWith('post ') ? key.indexOf('.', key.indexOf(' ')) : key.indexOf('.');
  return { key, owner: globRegex(key.slice(0, at)), path: key.slice(at + 1), text };
});

/** The overlay entries that described something: a test holds the list to having no stale entry. */
export const usedDescriptions = new Set<string>();

/**
 * Gives every property without a description one: from FIELD_DESCRIPTIONS by where it is, else
 * from the GLOSSARY by its name. Walks components and the routes' inline schemas (`$ref`s are
 * described where they point).
 */
function describeFields(doc: Json): void {
  const walk = (schema: Json, owner: string, path: string[]) => {
    if (!isObject(schema)) return;
    for (const key of ['items', 'additionalProperties', 'not'] as const) if (isObject(schema[key])) walk(schema[key], owner, path);
    for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const) if (Array.isArray(schema[key])) for (const s of schema[key]) walk(s, owner, path);
    for (const [name, prop] of Object.entries((schema.properties ?? {}) as Json)) {
      if (!isObject(prop)) continue;
      const here = [...path, name];
      if (!prop.description) {
        const hit = OVERLAY.find((o) => o.path === here.join('.') && o.owner.test(owner));
        if (hit) usedDescriptions.add(hit.key);
        const text = hit?.text ?? GLOSSARY[name];
        if (text) prop.description = text;
      }
      walk(prop, owner, here);
    }
  };
  for (const [name, schema] of Object.entries((doc.components?.schemas ?? {}) as Json)) walk(schema, name, []);
  for (const [p, item] of Object.entries((doc.paths ?? {}) as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      if (!isObject(op)) continue;
      const owner = `${method} ${p}`;
      for (const m of Object.values((op.requestBody?.content ?? {}) as Json)) walk(m.schema, owner, []);
      for (const r of Object.values((op.responses ?? {}) as Json)) for (const m of Object.values((r.content ?? {}) as Json)) walk(m.schema, owner, []);
    }
  }
}

export function finishDocument(doc: Json): Json {
  defaultForRedirects(doc);
  hoistTitled(doc);
  describeFields(doc);
  discriminatorMappings(doc);
  tuplesAsPrefixItems(doc);
  mediaExamples(doc);
  return doc;
}
