import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, FastifySchemaCompiler } from 'fastify';
import { ApiError, ErrorCodes, type ErrorEntry } from '../shared/errors.js';
import { BASE64_BYTES, PATTERN_WORDS } from './schemas.js';

// eslint-disable-next-line no-restricted-syntax -- ajv-formats' CommonJS default export is typed as its module namespace under NodeNext
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const common: Options = {
  allErrors: true,
  // Errors carry their schema: a message names a pattern's words and a discriminator's kinds.
  verbose: true,
  discriminator: true,
  useDefaults: true,
  strict: false,
  removeAdditional: false,
  // Checking each schema against JSON Schema's meta-schema first compiles that meta-schema, 40 ms
  // inside the first request a new server answers (most of its wait after listening). The route
  // schemas are fixed in the code: test/http/route-schemas.test.ts checks every one of them once.
  validateSchema: false,
};

// Bodies are JSON: their types are exact and extra properties are refused, never stripped.
const bodyAjv = addFormats(new Ajv({ ...common, coerceTypes: false }));
// Query strings, path parameters and headers arrive as text and need coercion.
const textAjv = addFormats(new Ajv({ ...common, coerceTypes: 'array' }));

/** Padded standard base64 (RFC 4648 §4): groups of four, `=` only as the final padding. */
export const STANDARD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The bytes a padded standard base64 text decodes to, without decoding it. */
export const base64DecodedLength = (text: string) => (text.length / 4) * 3 - (text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0);

/** An ajv keyword's function; it reports through its `errors` (ajv adds where). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Ajv's keyword functions receive any value the schema is applied to
type KeywordCheck<S> = ((schema: S, data: any) => boolean) & { errors?: Partial<ErrorObject>[] };

const base64Bytes: KeywordCheck<{ min: number; max: number }> = (bounds, data: string) => {
  const fail = (message: string) => {
    base64Bytes.errors = [{ keyword: BASE64_BYTES, params: bounds, message }];
    return false;
  };
  if (!STANDARD_BASE64.test(data)) return fail('must be padded standard base64 (RFC 4648 §4: A-Z a-z 0-9 + /, length a multiple of 4, = only as padding)');
  const bytes = base64DecodedLength(data);
  if (bytes < bounds.min) return fail(bytes === 0 ? 'must not be empty' : `decodes to ${bytes} bytes; at least ${bounds.min} are needed`);
  if (bytes > bounds.max) return fail(`decodes to ${bytes} bytes; at most ${bounds.max} are allowed`);
  return true;
};
bodyAjv.addKeyword({ keyword: BASE64_BYTES, type: 'string', schemaType: 'object', errors: true, validate: base64Bytes });

/**
 * `'x-no-body': true`: what a route that takes no body validates its body with (see
 * `closeUndeclaredParts`). No body, an empty one, JSON `null` or `{}` pass; anything else is 422,
 * each property of an object at its own path.
 */
const NO_BODY = 'x-no-body';
const NO_BODY_MESSAGE = 'this operation takes no body (send none, or {})';
const noBody: KeywordCheck<boolean> = (_on, data: unknown) => {
  if (data === null || data === undefined) return true;
  if (typeof data === 'object' && !Array.isArray(data)) {
    const keys = Object.keys(data);
    if (keys.length === 0) return true;
    noBody.errors = keys.slice(0, MAX_ENTRIES).map((key) => ({ keyword: 'additionalProperties', params: { additionalProperty: key }, message: `is not allowed: ${NO_BODY_MESSAGE}` }));
    return false;
  }
  noBody.errors = [{ keyword: NO_BODY, params: {}, message: `must be empty: ${NO_BODY_MESSAGE}` }];
  return false;
};
bodyAjv.addKeyword({ keyword: NO_BODY, errors: true, validate: noBody });

const NoBodySchema = { [NO_BODY]: true, description: 'No body' };
const NoQuerySchema = { type: 'object', properties: {}, additionalProperties: false };

/** Whether a route's body schema is the one `closeUndeclaredParts` gave it (the OpenAPI document shows no body then). */
export const isNoBodySchema = (schema: unknown) => typeof schema === 'object' && schema !== null && (schema as Record<string, unknown>)[NO_BODY] === true;

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Every route declares what it takes: one without a body schema takes no body (see NO_BODY),
 * one without a querystring schema takes no query parameters (an unknown one is 422 like
 * everywhere else). Not for the reference page's assets (`/docs`), which are not the API's.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any app, whatever its server, logger and type provider: this reads only route options
export function closeUndeclaredParts(app: FastifyInstance<any, any, any, any, any>): void {
  app.addHook('onRoute', (route) => {
    if (route.url === '/docs' || route.url.startsWith('/docs/')) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const schema = { ...(route.schema ?? {}) };
    if (!schema.querystring) schema.querystring = NoQuerySchema;
    if (!schema.body && methods.some((m) => BODY_METHODS.has(m))) schema.body = NoBodySchema;
    route.schema = schema;
  });
}

/**
 * Rules a schema cannot say (the uniqueness of ids within a body), run once the schema passes,
 * keyed by the schema object a route declares. Part of validation, so their ApiError is
 * answered where docs/spec-gaps.md, "Conventions" puts 422s: before Service-Context, roles and existence.
 */
const rulesAfterSchema = new WeakMap<object, (data: unknown) => void>();

export function checkAfterSchema(schema: object, rule: (data: unknown) => void): void {
  rulesAfterSchema.set(schema, rule);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Fastify's compiler type is generic over the schema, and this compiles every schema
export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) => {
  const checked = checkedValidator((httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object), httpPart ?? 'body');
  const rule = rulesAfterSchema.get(schema as object);
  return rule ? withRule(checked, rule) : checked;
};

function withRule(validate: CompiledValidator, rule: (data: unknown) => void): CompiledValidator {
  const check = ((data, ctx) => {
    if (!validate(data, ctx)) {
      check.errors = validate.errors;
      return false;
    }
    try {
      rule(data);
    } catch (error) {
      // Fastify answers a validator's `{ error }` with that error, through the error handler.
      if (error instanceof ApiError) return { error } as never;
      throw error;
    }
    return true;
  }) as CompiledValidator;
  check.schemaEnv = validate.schemaEnv;
  return check;
}

/**
 * Text that cannot be kept as it was sent: NUL (PostgreSQL's text type refuses it, so a lookup
 * or insert of it was a 500 there while SQLite kept it) and unpaired UTF-16 surrogates (they
 * have no UTF-8 form: both engines would store U+FFFD instead). Refused in every string value
 * of every validated part of a request (422 at the field's path), so whatever is accepted comes
 * back byte for byte on both engines. Object keys are left to their area: a fixed schema refuses
 * unknown ones, free-form objects are stored as JSON (which escapes both), and file paths have
 * their own rules (7307).
 */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSTORABLE_MESSAGE = 'must not contain NUL (U+0000) or an unpaired UTF-16 surrogate';

/**
 * How deeply objects and arrays may nest in any part of a request, the part itself (the body)
 * being level 1. Free-form JSON (a dashboard's filter values, an install's values) is stored
 * and fingerprinted with recursive JSON code: 5,000 levels in a 10 KB body overflowed the stack
 * (a 500). 64 is far beyond any real document.
 */
export const MAX_NESTING_DEPTH = 64;
const TOO_DEEP_MESSAGE = `nests objects and arrays more than ${MAX_NESTING_DEPTH} levels deep`;

/**
 * The values of a parsed part that cannot be stored: text with NUL or a lone surrogate, and
 * nesting past MAX_NESTING_DEPTH (reported once, at the first container past it, whose content
 * is not looked at). Iterative, so no depth can overflow the stack.
 */
const NONE_FOUND: ErrorObject[] = [];

/**
 * Whether every value of this object is text that can be stored or a scalar: the headers, path
 * parameters and query of nearly every request, found so without the walk's nodes and entries
 * (1.7 of a cached read's 2.0 µs of validation: docs/benchmarks.md, round fourteen). Anything
 * else, a string to report included, takes the walk, which reports it at its path.
 */
function flatAndStorable(data: object): boolean {
  for (const key in data) {
    if (!Object.hasOwn(data, key)) continue;
    const value = (data as Record<string, unknown>)[key];
    if (typeof value === 'string' ? UNSTORABLE.test(value) : value !== null && typeof value === 'object') return false;
  }
  return true;
}

function unstorable(data: unknown): ErrorObject[] {
  if (data !== null && typeof data === 'object' && !Array.isArray(data) && flatAndStorable(data)) return NONE_FOUND;
  const found: ErrorObject[] = [];
  // A node's JSON pointer is built only when it is reported: a body of a thousand 1 KiB keys
  // would otherwise build a megabyte of pointers to find nothing.
  type Node = { value: unknown; parent: Node | null; key: string; depth: number };
  const pointerOf = (node: Node): string => {
    const keys: string[] = [];
    for (let n: Node | null = node; n && n.parent; n = n.parent) keys.push(n.key.replace(/~/g, '~0').replace(/\//g, '~1'));
    return keys
      .reverse()
      .map((k) => `/${k}`)
      .join('');
  };
  const stack: Node[] = [{ value: data, parent: null, key: '', depth: 1 }];
  const error = (node: Node, keyword: string, message: string): ErrorObject => ({ keyword, instancePath: pointerOf(node), schemaPath: '#', params: {}, message });
  let tooDeep = false;
  while (stack.length > 0 && found.length < MAX_ENTRIES) {
    const node = stack.pop()!;
    const { value, depth } = node;
    if (typeof value === 'string') {
      if (UNSTORABLE.test(value)) found.push(error(node, 'storableText', UNSTORABLE_MESSAGE));
    } else if (value !== null && typeof value === 'object') {
      if (depth > MAX_NESTING_DEPTH) {
        // Once: the first container past the limit (in document order) names where.
        if (!tooDeep) found.push(error(node, 'maxNestingDepth', TOO_DEEP_MESSAGE));
        tooDeep = true;
        continue;
      }
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        stack.push({ value: child, parent: node, key, depth: depth + 1 });
      }
    }
  }
  return found;
}

type CompiledValidator = ((data: unknown, ctx?: Parameters<ValidateFunction>[1]) => boolean) & { errors?: ErrorObject[] | null; schemaEnv?: unknown };

/**
 * A compiled schema plus the rules every part shares (unstorable text, nesting depth); their
 * errors come first, as the most specific reason. A body that is required but absent (no body,
 * or an empty one with Content-Type JSON) is one clear entry on ["body"].
 */
function checkedValidator(validate: ValidateFunction, httpPart: string): CompiledValidator {
  const checked: CompiledValidator = (data, ctx) => {
    const valid = validate(data, ctx);
    if (!valid && httpPart === 'body' && (data === null || data === undefined)) {
      checked.errors = [{ keyword: 'required', instancePath: '', schemaPath: '#', params: {}, message: 'is required: this operation takes a JSON body' }];
      return false;
    }
    const bad = unstorable(data);
    checked.errors = bad.length > 0 ? [...bad, ...(validate.errors ?? [])] : validate.errors;
    return valid && bad.length === 0;
  };
  // Fastify passes the parent object (so defaults can be applied to the root) when this is set.
  checked.schemaEnv = validate.schemaEnv;
  return checked;
}

const PART: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'headers' };
/** Entries one 422 reports at most (the rest are likely the same mistake repeated). */
export const MAX_ENTRIES = 50;

function pointerToPath(pointer: string): string[] {
  if (!pointer) return [];
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function fieldPath(err: ErrorObject): string[] {
  const base = pointerToPath(err.instancePath);
  const p = err.params as Record<string, unknown>;
  if (err.keyword === 'required' && typeof p.missingProperty === 'string') return [...base, p.missingProperty];
  if (err.keyword === 'additionalProperties' && typeof p.additionalProperty === 'string') return [...base, p.additionalProperty];
  if (err.keyword === 'discriminator' && typeof p.tag === 'string') return [...base, p.tag];
  return base;
}

const FORMAT_WORDS: Record<string, string> = {
  'date-time': 'a date and time such as 2026-11-25T09:30:00Z (RFC 3339)',
  date: 'a date such as 2026-11-25',
  uri: 'an absolute URI such as https://example.com/hook',
  email: 'an email address such as ada@example.com',
  uuid: 'a UUID such as 123e4567-e89b-12d3-a456-426614174000',
};

/** The values a discriminated union's tag may take, from its branches' `const` or one-value `enum`. */
function discriminatorValues(schema: unknown, tag: string): unknown[] {
  const branches = (schema as { oneOf?: unknown[] } | undefined)?.oneOf ?? [];
  return branches.flatMap((b) => {
    const prop = (b as { properties?: Record<string, { const?: unknown; enum?: unknown[] }> }).properties?.[tag];
    return prop?.const !== undefined ? [prop.const] : (prop?.enum ?? []);
  });
}

const TYPE_WORDS: Record<string, string> = { string: 'a string', integer: 'an integer', number: 'a number', boolean: 'true or false', object: 'an object', array: 'a list', null: 'null' };

function describe(err: ErrorObject, path: string[]): string {
  const field = path.length > 1 ? path.slice(1).join('.') : (path[0] ?? 'value');
  const p = err.params as Record<string, unknown>;
  switch (err.keyword) {
    case 'required':
      return typeof p.missingProperty === 'string' ? `${field} is required` : `${field} ${err.message ?? 'is required'}`;
    case 'additionalProperties':
      return `${field} ${err.message?.startsWith('is not allowed') ? err.message : 'is not an allowed property'}`;
    case 'discriminator': {
      const kinds = discriminatorValues(err.parentSchema, String(p.tag));
      const list = kinds.length > 0 ? `: ${kinds.map((v) => JSON.stringify(v)).join(', ')}` : '';
      return p.error === 'mapping' ? `${field} must be one of${list}` : `${field} must be a string naming the kind${list}`;
    }
    case 'enum':
      return `${field} must be one of: ${((p.allowedValues as unknown[]) ?? []).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `${field} must be ${JSON.stringify(p.allowedValue)}`;
    case 'pattern': {
      // Never the regular expression: the schema's words for it (every pattern has some: a test walks them).
      const words = err.parentSchema?.[PATTERN_WORDS];
      return typeof words === 'string' ? `${field} must be ${words}` : `${field} is not in the expected form`;
    }
    case 'format':
      return `${field} must be ${FORMAT_WORDS[String(p.format)] ?? `a valid ${String(p.format)}`}`;
    // Words for the bounds, not ajv's "must NOT have fewer than 12 characters": people read these.
    case 'minLength':
      return Number(p.limit) === 1 ? `${field} must not be empty` : `${field} must be at least ${String(p.limit)} characters long`;
    case 'maxLength':
      return `${field} must be at most ${String(p.limit)} characters long`;
    case 'minItems':
      return Number(p.limit) === 1 ? `${field} must not be an empty list` : `${field} must have at least ${String(p.limit)} items`;
    case 'maxItems':
      return `${field} must have at most ${String(p.limit)} items`;
    case 'minProperties':
      return `${field} must have at least ${String(p.limit)} ${Number(p.limit) === 1 ? 'entry' : 'entries'}`;
    case 'maxProperties':
      return `${field} must have at most ${String(p.limit)} entries`;
    case 'minimum':
      return `${field} must be at least ${String(p.limit)}`;
    case 'maximum':
      return `${field} must be at most ${String(p.limit)}`;
    case 'exclusiveMinimum':
      return `${field} must be greater than ${String(p.limit)}`;
    case 'exclusiveMaximum':
      return `${field} must be less than ${String(p.limit)}`;
    case 'type':
      return `${field} must be ${String(p.type)
        .split(',')
        .map((t) => TYPE_WORDS[t] ?? t)
        .join(' or ')}`;
    default:
      return `${field} ${err.message ?? 'is not valid'}`;
  }
}

/**
 * Unions of fixed values (`Type.Union` of literals, maybe with null) that failed, by instance
 * path: their branches' errors each name one value, the union's message names them all.
 */
function unionsOfValues(errors: ErrorObject[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const err of errors) {
    if (err.keyword !== 'anyOf' && err.keyword !== 'oneOf') continue;
    const branches = err.schema as Array<{ const?: unknown; type?: unknown }> | undefined;
    if (!Array.isArray(branches) || !branches.every((b) => b.const !== undefined || b.type === 'null')) continue;
    out.set(err.instancePath, branches.map((b) => JSON.stringify(b.const !== undefined ? b.const : null)).join(', '));
  }
  return out;
}

/** One entry per violated field, each with its path; the first problem of a field wins. */
export function validationEntries(errors: ErrorObject[], context: string): ErrorEntry[] {
  const part = PART[context] ?? context;
  const seen = new Set<string>();
  const entries: ErrorEntry[] = [];
  const choices = unionsOfValues(errors);
  for (const err of errors) {
    // A failed oneOf/anyOf only summarizes errors of its branches that are reported already.
    if ((err.keyword === 'oneOf' || err.keyword === 'anyOf' || err.keyword === 'if') && errors.length > 1) continue;
    const path = [part, ...fieldPath(err)];
    const key = path.join('\u0000');
    if (seen.has(key)) continue;
    seen.add(key);
    const listed = choices.get(err.instancePath);
    const field = path.length > 1 ? path.slice(1).join('.') : (path[0] ?? 'value');
    const message = listed && fieldPath(err).length === pointerToPath(err.instancePath).length ? `${field} must be one of: ${listed}` : describe(err, path);
    entries.push({ code: ErrorCodes.VALIDATION_FAILED.code, message, path });
    if (entries.length >= MAX_ENTRIES) break;
  }
  if (entries.length === 0) {
    entries.push({ code: ErrorCodes.VALIDATION_FAILED.code, message: 'The request is not valid', path: [part] });
  }
  return entries;
}

export function validationFailure(errors: ErrorObject[], context: string): ApiError {
  return new ApiError('VALIDATION_FAILED', { entries: validationEntries(errors, context) });
}
