/**
 * An answer already written as JSON (a page the database wrote: src/db/json-rows.ts). The route's
 * serializer sends its text as it is (src/http/lazy-compilation.ts) instead of serializing by
 * the response schema; tests hold each such answer to that schema and to the object it replaces.
 */
export class PreSerialized {
  constructor(
    readonly json: string,
    /** A versioned list's page: the version it was read at (src/http/list-cache.ts tags it). */
    readonly listVersion?: { list: string; version: number },
  ) {}

  /** What it stands for, where something other than the route's serializer reads it. */
  toJSON(): unknown {
    return JSON.parse(this.json);
  }
}

/** Typed as the value the route declares, so routes and services keep their response types. */
// eslint-disable-next-line no-restricted-syntax -- a PreSerialized body stands in for the typed answer: the serializer writes its JSON as it is
export const preSerialized = <T>(json: string): T => new PreSerialized(json) as unknown as T;
