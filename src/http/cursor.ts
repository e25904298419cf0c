import { hmacSha256, safeEqual } from '../shared/crypto.js';
import { ApiError } from '../shared/errors.js';

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

const invalidCursor = () =>
  new ApiError('VALIDATION_FAILED', { message: 'cursor is not a cursor of this list', path: ['query', 'cursor'] });

/** One page of a keyset query fetched with limit + 1 rows. */
export function toPage<Row, Item>(rows: Row[], limit: number, toItem: (r: Row) => Item, positionOf: (r: Row) => (string | number)[], cursors: CursorCodec, list: string) {
  const hasMore = rows.length > limit;
  const pageRows = hasMore ? rows.slice(0, limit) : rows;
  const last = pageRows[pageRows.length - 1];
  return {
    data: pageRows.map(toItem),
    has_more: hasMore,
    next_cursor: hasMore && last !== undefined ? cursors.encode(list, positionOf(last)) : null,
  };
}
