import type { FastifySchemaCompiler } from 'fastify';
import { validatorCompiler } from '../http/validation.js';
import { ApiError } from '../shared/errors.js';
import { assertUniqueKeys } from './content-rules.js';

type Validate = ReturnType<FastifySchemaCompiler<unknown>> & { schemaEnv?: unknown };

/**
 * The app's validator, and for a dashboard body also the uniqueness of widget ids and filter
 * keys, which JSON Schema cannot say. Part of validation, so a repeat is a 422 (7104, 7105)
 * at the point CONTRACT §1 puts 422s: before Service-Context and roles (403) and existence.
 */
export const dashboardBodyValidator: FastifySchemaCompiler<unknown> = (route) => {
  const schemaCheck = validatorCompiler(route) as unknown as Validate;
  if (route.httpPart !== 'body') return schemaCheck;
  const check = ((data: unknown, ctx?: unknown) => {
    if (!(schemaCheck as (d: unknown, c?: unknown) => boolean)(data, ctx)) {
      check.errors = schemaCheck.errors;
      return false;
    }
    try {
      assertUniqueKeys(data as Parameters<typeof assertUniqueKeys>[0], ['body']);
    } catch (error) {
      if (error instanceof ApiError) return { error };
      throw error;
    }
    return true;
  }) as Validate;
  // Fastify hands Ajv's functions their parent (so defaults can apply at the root): keep that.
  check.schemaEnv = schemaCheck.schemaEnv;
  return check;
};
