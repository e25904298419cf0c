import type { paths } from './schema.js';
import { unwrap, type Answer } from './errors.js';

/** A page of any list operation. */
export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

type GetOf<P> = P extends { get: infer G } ? G : never;
type Ok<Op> = Op extends { responses: { 200: { content: { 'application/json': infer B } } } } ? B : never;

/** The paths whose GET answers a page: `/v1/dashboards`, `/v1/secrets/{id}/versions`, ... */
export type ListPath = {
  [P in keyof paths]: Ok<GetOf<paths[P]>> extends Page<unknown> ? P : never;
}[keyof paths];

/** The item type of a list path: `ItemOf<'/v1/dashboards'>` is a dashboard. */
export type ItemOf<P extends ListPath> = Ok<GetOf<paths[P]>> extends Page<infer T> ? T : never;

type ParamsOf<P extends ListPath> = GetOf<paths[P]> extends { parameters: infer X } ? X : never;
type QueryOf<P extends ListPath> = ParamsOf<P> extends { query?: infer Q } ? Q : never;

/** What `paginate` takes after the path: the operation's own parameters (its query without `cursor`). */
export interface PaginateInit<P extends ListPath> {
  params?: Omit<ParamsOf<P>, 'query'> & { query?: Omit<NonNullable<QueryOf<P>>, 'cursor'> };
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

type Getter = (path: never, init: never) => Promise<Answer<unknown>>;

/**
 * Every item of a list, page after page, as an async iterator: it asks for the next page only
 * when the items of this one are used up, and stops at the end or when the loop breaks.
 * A failed page throws its `WspError`.
 */
export async function* paginate<P extends ListPath>(get: Getter, path: P, init: PaginateInit<P> = {}): AsyncGenerator<ItemOf<P>, void, undefined> {
  let cursor: string | undefined;
  do {
    const params = { ...(init.params ?? {}), query: { ...((init.params?.query as object | undefined) ?? {}), ...(cursor ? { cursor } : {}) } };
    const page = (await unwrap((get as (p: P, i: unknown) => Promise<Answer<unknown>>)(path, { ...init, params }))) as Page<ItemOf<P>>;
    yield* page.data;
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
}
