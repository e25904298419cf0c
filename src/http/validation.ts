import { Ajv, type ErrorObject, type Options } from 'ajv';
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
  (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object);

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
