import { setImmediate as yieldToRequests } from 'node:timers/promises';
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifySchemaCompiler, FastifyServerOptions } from 'fastify';
import { PreSerialized } from '../shared/pre-serialized.js';

export type Validator = ((data: unknown, ctx?: unknown) => boolean) & { errors?: FastifyValidationResult['errors']; schemaEnv?: unknown };
type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Fastify's compiler type is generic over the schema, and this compiles every schema
type FastifyValidationResult = ReturnType<FastifySchemaCompiler<any>>;
type Serializer = (data: unknown) => string;
export interface ValidatedPart {
  method: string;
  url: string;
  httpPart: string;
  schema: unknown;
}
type SerializerCompiler = (route: { schema?: unknown; method: string; url: string; httpStatus: string }) => Serializer;

/**
 * Route schemas compiled when first needed instead of all before the server is ready: compiling
 * every route's validators (ajv) and serializers (fast-json-stringify) took a second of the two
 * `wsp serve` needed to answer. `warm()` compiles what no request has needed yet, one schema at a
 * time with the event loop free in between; the server runs it once it listens.
 */
export class LazyCompilation {
  private readonly pending = new Set<() => unknown>();
  private readonly parts: ValidatedPart[] = [];

  /** Fastify's `schemaController.compilersFactory`: `validator` for requests, fast-json-stringify for responses, both lazy. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Fastify's compiler type is generic over the schema, and this compiles every schema
  compilersFactory(validator: FastifySchemaCompiler<any>): CompilersFactory {
    return {
      // eslint-disable-next-line no-restricted-syntax -- Fastify's CompilersFactory declares narrower functions than the ones its schema controller calls with these arguments
      buildValidator: (() => this.validators(validator)) as unknown as CompilersFactory['buildValidator'],
      // eslint-disable-next-line no-restricted-syntax -- the same: CompilersFactory's serializer type is narrower than what Fastify calls it with
      buildSerializer: ((externalSchemas: unknown, options: never) => this.serializers(SerializerSelector()(externalSchemas, options))) as unknown as CompilersFactory['buildSerializer'],
    };
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Fastify's compiler type is generic over the schema, and this compiles every schema
  private validators(compiler: FastifySchemaCompiler<any>): FastifySchemaCompiler<any> {
    return (route) => {
      this.parts.push({ method: route.method, url: route.url, httpPart: route.httpPart ?? 'body', schema: route.schema });
      // eslint-disable-next-line no-restricted-syntax -- Fastify types a compiled validator by its own result type; the function is Ajv's, which carries errors and schemaEnv
      const compileNow = () => compiler(route) as unknown as Validator;
      const validate = compiledWhenFirstUsed(compileNow, () => this.pending.delete(compile));
      const compile = () => validate.compile();
      this.pending.add(compile);
      return validate as FastifyValidationResult;
    };
  }

  private serializers(compiler: SerializerCompiler): SerializerCompiler {
    return (route) => {
      let compiled: Serializer | undefined;
      const compile = (): Serializer => {
        if (!compiled) {
          compiled = compiler(route);
          this.pending.delete(compile);
        }
        return compiled;
      };
      this.pending.add(compile);
      return (data) => (data instanceof PreSerialized ? data.json : compile()(data));
    };
  }

  /** Every request part a validator was made for, with its schema: what test/http/route-schemas.test.ts checks against the meta-schema the server does not compile. */
  get validatedParts(): readonly ValidatedPart[] {
    return this.parts;
  }

  /** How many schemas no request has needed and `warm()` has not reached yet. */
  get waiting(): number {
    return this.pending.size;
  }

  /** Compiles every schema still waiting; a schema that does not compile rejects with its error. */
  async warm(): Promise<void> {
    for (const compile of [...this.pending]) {
      compile();
      await yieldToRequests();
    }
  }
}

/**
 * A validator compiled on its first call (`compile()` compiles it sooner), for the routes that
 * bring their own validator compiler past the app's lazy one (the git routes').
 */
export function compiledWhenFirstUsed(compile: () => Validator, onCompiled: () => void = () => {}): Validator & { compile(): Validator } {
  let compiled: Validator | undefined;
  const get = (): Validator => {
    if (!compiled) {
      compiled = compile();
      onCompiled();
    }
    return compiled;
  };
  const validate = ((data: unknown, ctx?: unknown) => {
    const inner = get();
    const valid = inner(data, ctx);
    validate.errors = inner.errors;
    return valid;
  }) as Validator & { compile(): Validator };
  validate.compile = get;
  // Fastify hands ajv the parent object (so defaults reach the part itself) only when set.
  validate.schemaEnv = true;
  return validate;
}
