import { hmacSha256, safeEqual } from './crypto.js';
import { ApiError } from './errors.js';
import { PreSerialized } from './pre-serialized.js';

const SIG_BYTES = 16;
const SIG_CHARS = 22; // base64url of 16 bytes, unpadded

/**
 * Opaque page cursors: the keyset position, bound to the list it came from by an HMAC,
 * written in [A-Za-z0-9_-] only. A cursor from another list or a tampered one is 422.
 */
export class CursorCodec {
  constructor(private readonly key: Buffer) {}

  encode(list: string, position: readonly (string | number)[]): string {
    const payload = Buffer.from(JSON.stringify(position)).toString('base64url');
    return this.sign(list, payload) + payload;
  }

  decode(list: string, cursor: string): (string | number)[] {
    const sig = cursor.slice(0, SIG_CHARS);
    const payload = cursor.slice(SIG_CHARS);
    const expected = Buffer.from(this.sign(list, payload));
    if (payload.length === 0 || !safeEqual(Buffer.from(sig), expected)) throw invalidCursor();
    try {
      const value = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown;
      if (Array.isArray(value) && value.every((v) => typeof v === 'string' || typeof v === 'number')) return value;
    } catch {
      // fall through: a signed cursor always parses, so this is unreachable in practice
    }
    throw invalidCursor();
  }

  private sign(list: string, payload: string): string {
    return hmacSha256(this.key, `${list}\u0000${payload}`).subarray(0, SIG_BYTES).toString('base64url');
  }
}

const invalidCursor = () => new ApiError('VALIDATION_FAILED', { message: 'cursor is not a cursor of this list', path: ['query', 'cursor'] });

/** One page of a list, as every list operation answers it. */
export interface Page<Item> {
  data: Item[];
  has_more: boolean;
  next_cursor: string | null;
}

type Fetch<Row, Key> = (after: Key | null, take: number) => Promise<Row[]>;

/**
 * One page of a keyset list: the cursor decoded into the key to continue after (422 when it is
 * not a cursor of this list), `fetch` asked for one row more than the page to learn whether
 * another follows, and the next cursor made from the last row shown. Only this codec writes
 * cursors, and each is signed for its list, so a decoded key has the type its list encoded.
 */
async function keysetPage<Row, Item, Key extends string | number>(
  cursors: CursorCodec,
  list: string,
  page: { limit: number; cursor: string | undefined },
  fetch: Fetch<Row, Key>,
  keyOf: (row: Row) => Key,
  toItem: (row: Row) => Item,
): Promise<Page<Item>> {
  const { shown, hasMore, next } = await keysetRows(cursors, list, page, fetch, keyOf);
  return { data: shown.map(toItem), has_more: hasMore, next_cursor: next };
}

async function keysetRows<Row, Key extends string | number>(
  cursors: CursorCodec,
  list: string,
  page: { limit: number; cursor: string | undefined },
  fetch: Fetch<Row, Key>,
  keyOf: (row: Row) => Key,
): Promise<{ shown: Row[]; hasMore: boolean; next: string | null }> {
  const after = page.cursor ? (cursors.decode(list, page.cursor)[0] as Key) : null;
  const rows = await fetch(after, page.limit + 1);
  const hasMore = rows.length > page.limit;
  const shown = hasMore ? rows.slice(0, page.limit) : rows;
  const last = shown[shown.length - 1];
  return { shown, hasMore, next: hasMore && last !== undefined ? cursors.encode(list, [keyOf(last)]) : null };
}

/** A page of a list ordered by id (ids are time-ordered, so newest first). */
export function pageById<Row extends { id: string }, Item>(
  cursors: CursorCodec,
  list: string,
  page: { limit: number; cursor: string | undefined },
  fetch: Fetch<Row, string>,
  toItem: (row: Row) => Item,
) {
  return keysetPage(cursors, list, page, fetch, (r) => r.id, toItem);
}

/** A page of a list ordered by a per-parent sequence number. */
export function pageBySeq<Row, Item>(
  cursors: CursorCodec,
  list: string,
  page: { limit: number; cursor: string | undefined },
  fetch: Fetch<Row, number>,
  seqOf: (row: Row) => number,
  toItem: (row: Row) => Item,
) {
  return keysetPage(cursors, list, page, fetch, seqOf, toItem);
}

/** A keyset page of JSON rows as the database answers it: one row, whatever the page's size. */
export interface JsonPageRow {
  /** The shown rows' JSON objects, in the list's order, joined by commas ('' for none). */
  items: string | null;
  /** Rows read: the page's size plus one when another page follows. */
  rows: number | string;
  /** The key of the last row shown, which the next cursor continues after. */
  last_id: string | null;
  /** The list's version (migration 0018) read in the same statement, for the answer's ETag. */
  version: number | string | null;
}

/**
 * A page by id whose items the database wrote and joined as JSON, in one row (`jsonPage`, src/db/
 * json-rows.ts): the answer is assembled from that text, never parsed or built as objects, and
 * carries the list's version read in the same statement (src/http/list-cache.ts makes its ETag).
 */
export async function pageByIdAsJson<Item>(
  cursors: CursorCodec,
  list: string,
  page: { limit: number; cursor: string | undefined },
  versionedList: string,
  fetch: (after: string | null, take: number) => Promise<JsonPageRow>,
): Promise<Page<Item>> {
  const after = page.cursor ? (cursors.decode(list, page.cursor)[0] as string) : null;
  const row = await fetch(after, page.limit + 1);
  const hasMore = Number(row.rows) > page.limit;
  const next = hasMore && row.last_id !== null ? cursors.encode(list, [row.last_id]) : null;
  const json = `{"data":[${row.items ?? ''}],"has_more":${hasMore},"next_cursor":${JSON.stringify(next)}}`;
  // eslint-disable-next-line no-restricted-syntax -- a PreSerialized page stands in for the typed answer: the serializer writes its JSON as it is (src/shared/pre-serialized.ts)
  return new PreSerialized(json, { list: versionedList, version: Number(row.version ?? 0) }) as unknown as Page<Item>;
}
