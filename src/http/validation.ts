import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { ApiError, ErrorCodes, type ErrorEntry } from '../shared/errors.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const common: Options = {
  allErrors: true,
  discriminator: true,
  useDefaults: true,
  strict: false,
  removeAdditional: false,
};

// Bodies are JSON: their types are exact and extra properties are refused, never stripped.
const bodyAjv = addFormats(new Ajv({ ...common, coerceTypes: false }));
// Query strings, path parameters and headers arrive as text and need coercion.
const textAjv = addFormats(new Ajv({ ...common, coerceTypes: 'array' }));

export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) =>
  storableTextOnly((httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object));

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

/** The string values of a parsed value that cannot be stored; iterative, so nesting depth cannot overflow the stack. */
function unstorableText(data: unknown): ErrorObject[] {
  const found: ErrorObject[] = [];
  const stack: { value: unknown; pointer: string }[] = [{ value: data, pointer: '' }];
  const error = (instancePath: string): ErrorObject => ({ keyword: 'storableText', instancePath, schemaPath: '#', params: {}, message: UNSTORABLE_MESSAGE });
  while (stack.length > 0 && found.length < MAX_ENTRIES) {
    const { value, pointer } = stack.pop()!;
    if (typeof value === 'string') {
      if (UNSTORABLE.test(value)) found.push(error(pointer));
    } else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        stack.push({ value: child, pointer: `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}` });
      }
    }
  }
  return found;
}

type CompiledValidator = ((data: unknown, ctx?: Parameters<ValidateFunction>[1]) => boolean) & { errors?: ErrorObject[] | null; schemaEnv?: unknown };

function storableTextOnly(validate: ValidateFunction): CompiledValidator {
  const checked: CompiledValidator = (data, ctx) => {
    const valid = validate(data, ctx) as boolean;
    const bad = unstorableText(data);
    checked.errors = bad.length > 0 ? [...(validate.errors ?? []), ...bad] : validate.errors;
    return valid && bad.length === 0;
  };
  // Fastify passes the parent object (so defaults can be applied to the root) when this is set.
  checked.schemaEnv = validate.schemaEnv;
  return checked;
}

const PART: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'headers' };
const MAX_ENTRIES = 50;

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

function describe(err: ErrorObject, path: string[]): string {
  const field = path.length > 1 ? path.slice(1).join('.') : path[0] ?? 'value';
  const p = err.params as Record<string, unknown>;
  switch (err.keyword) {
    case 'required':
      return `${field} is required`;
    case 'additionalProperties':
      return `${field} is not an allowed property`;
    case 'discriminator':
      return p.error === 'mapping' ? `${field} must be one of the allowed kinds` : `${field} must be a string naming the kind`;
    case 'enum':
      return `${field} must be one of: ${((p.allowedValues as unknown[]) ?? []).map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return `${field} ${err.message ?? 'is not valid'}`;
  }
}

/** One entry per violated field, each with its path; the first problem of a field wins. */
export function validationEntries(errors: ErrorObject[], context: string): ErrorEntry[] {
  const part = PART[context] ?? context;
  const seen = new Set<string>();
  const entries: ErrorEntry[] = [];
  for (const err of errors) {
    // A failed oneOf/anyOf only summarizes errors of its branches that are reported already.
    if ((err.keyword === 'oneOf' || err.keyword === 'anyOf' || err.keyword === 'if') && errors.length > 1) continue;
    const path = [part, ...fieldPath(err)];
    const key = path.join('\u0000');
    if (seen.has(key)) continue;
    seen.add(key);
    entries.push({ code: ErrorCodes.VALIDATION_FAILED.code, message: describe(err, path), path });
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
