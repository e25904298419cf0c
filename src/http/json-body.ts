import sjson from 'secure-json-parse';
import { ApiError } from '../shared/errors.js';
import type { App } from './fastify-types.js';

/** Text that might hold a forbidden key (also when written with \u escapes): only then is the parsed value walked. */
const SUSPECT_PROTO = /__proto__|\\u/;
const SUSPECT_CONSTRUCTOR = /constructor|\\u/;

const malformed = (message: string) => new ApiError('MALFORMED_JSON', { message, path: ['body'] });

/**
 * The body of an `application/json` request, parsed. An empty body is no body (`undefined`):
 * a route that takes none accepts it, one that needs one says so (422 7003 on ["body"]).
 * Text that is not JSON, and JSON with a `__proto__` key or a `constructor` key holding a
 * `prototype` (prototype poisoning, refused by secure-json-parse), are 422 7004, each with its
 * own message: Fastify's default parser called both "not valid JSON".
 */
export function parseJsonBody(text: string): unknown {
  const json = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (json.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    throw malformed(`The request body is not valid JSON: ${(err as Error).message.slice(0, 200)}`);
  }
  if (value === null || typeof value !== 'object') return value;
  if (SUSPECT_PROTO.test(json)) {
    try {
      sjson.scan(value, { protoAction: 'error', constructorAction: 'ignore' });
    } catch {
      throw malformed('The request body is valid JSON but has a "__proto__" key, which is refused (prototype poisoning)');
    }
  }
  if (SUSPECT_CONSTRUCTOR.test(json)) {
    try {
      sjson.scan(value, { protoAction: 'ignore', constructorAction: 'error' });
    } catch {
      throw malformed('The request body is valid JSON but has a "constructor" key holding a "prototype", which is refused (prototype poisoning)');
    }
  }
  return value;
}

/** The project's own `application/json` parser (with parameters such as charset too). */
export function installJsonParser(app: App): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
}
