import { pooledRandom } from '../shared/random-pool.js';
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { hmacSha256 } from '../shared/crypto.js';
import { canonicalJson } from '../shared/canonical-json.js';
import { nowSeconds, type Clock } from '../shared/clock.js';
import { parseIfMatch } from '../shared/etag.js';
import type { WriteClaim } from '../db/write-transaction.js';

/** Results are kept this long, as docs/spec-gaps.md, "Conventions" says. */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;
/** A claim not completed by then is taken to be abandoned (its server died). */
export const IDEMPOTENCY_LEASE_SECONDS = 120;

export type IdempotencyScope = WriteClaim['scope'];

/**
 * A claim held by one request: its scope and the random token only it knows. Its write's
 * transaction marks it committed (`writeTransaction`, src/db/write-transaction.ts).
 */
export type IdempotencyClaim = WriteClaim;

export type ClaimOutcome =
  { kind: 'claimed'; token: string } | { kind: 'answer_lost' } | { kind: 'replay'; status: number; body: string; headers: Record<string, string> } | { kind: 'in_flight' } | { kind: 'mismatch' };

/**
 * The fingerprint of a request, kept instead of the request itself. It is keyed with a
 * server secret: a plain hash of a body holding a short secret payload could be reversed by
 * guessing, a keyed one cannot without the key. The same request always gives the same one:
 * the body as canonical JSON (keys sorted, so their order does not matter) and If-Match as
 * parsed (`"e"`, `e` and `W/"e"` are the same condition).
 */
export function fingerprint(key: Buffer, method: string, url: string, body: unknown, ifMatch: string | undefined): string {
  return hmacSha256(key, canonicalJson([method, url, body ?? null, ifMatch === undefined ? null : parseIfMatch(ifMatch)])).toString('hex');
}

const newClaimToken = () => pooledRandom(16, (bytes, start) => bytes.toString('base64url', start, start + 16));

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the same filter is applied to select, update and delete builders, which share no Kysely type
const where = (s: IdempotencyScope) => (qb: any) => qb.where('workspace_id', '=', s.workspaceId).where('principal_id', '=', s.principalId).where('key', '=', s.key);

/**
 * Claims a key in the database, so the guarantee holds across server instances: the first
 * request inserts a `running` row; later ones see it and replay, wait (409) or are refused.
 */
export async function claimKey(db: Kysely<DB>, clock: Clock, scope: IdempotencyScope, fp: string, tried: string[] = []): Promise<ClaimOutcome> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const now = nowSeconds(clock);
    const token = newClaimToken();
    // Before the statement: one whose answer is lost may still have made the claim (see pipeline.ts).
    tried.push(token);
    const inserted = await db
      .insertInto('idempotency_keys')
      .values({
        workspace_id: scope.workspaceId,
        principal_id: scope.principalId,
        key: scope.key,
        fingerprint: fp,
        state: 'running',
        status_code: null,
        response_body: null,
        response_headers: null,
        created_at: now,
        locked_until: now + IDEMPOTENCY_LEASE_SECONDS,
        expires_at: now + IDEMPOTENCY_TTL_SECONDS,
        claim_token: token,
      })
      .onConflict((oc) => oc.columns(['workspace_id', 'principal_id', 'key']).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return { kind: 'claimed', token };

    const row = await where(scope)(db.selectFrom('idempotency_keys').selectAll()).executeTakeFirst();
    if (!row) continue;
    if (row.expires_at <= now) {
      await where(scope)(db.deleteFrom('idempotency_keys')).where('expires_at', '<=', now).execute();
      continue;
    }
    if (row.fingerprint !== fp) return { kind: 'mismatch' };
    if (row.state === 'done') {
      return {
        kind: 'replay',
        status: row.status_code,
        body: row.response_body ?? '',
        headers: row.response_headers ? (JSON.parse(row.response_headers) as Record<string, string>) : {},
      };
    }
    if (row.state === 'lost') return { kind: 'answer_lost' };
    if (row.locked_until > now) return { kind: 'in_flight' };
    // A write committed under this claim: it must not run again, though its answer never came.
    if (row.state === 'committed') return { kind: 'answer_lost' };
    // The lease ran out: its request is taken to be dead (its server crashed). The claim moves
    // to this request, with a new token, so the old one can no longer complete or release it.
    const taken = await where(scope)(db.updateTable('idempotency_keys'))
      .set({ locked_until: now + IDEMPOTENCY_LEASE_SECONDS, claim_token: token })
      .where('state', '=', 'running')
      .where('locked_until', '=', row.locked_until)
      .executeTakeFirst();
    if (Number(taken.numUpdatedRows) > 0) return { kind: 'claimed', token };
  }
  return { kind: 'in_flight' };
}

/** Stores the final response, if `claim` still holds the key (false when it was taken over). */
export async function completeKey(db: Kysely<DB>, claim: IdempotencyClaim, status: number, body: string, headers: Record<string, string>): Promise<boolean> {
  const res = await where(claim.scope)(db.updateTable('idempotency_keys'))
    .set({ state: 'done', status_code: status, response_body: body, response_headers: JSON.stringify(headers), claim_token: null })
    .where('state', 'in', ['running', 'committed'])
    .where('claim_token', '=', claim.token)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/**
 * Forgets a claim whose request failed in a way the client may retry (5xx, 422), if `claim` still
 * holds it; a claim whose write committed is kept as `lost` instead (a retry is answered 409
 * 7055, never carried out again). True once recorded either way.
 */
export async function releaseKey(db: Kysely<DB>, claim: IdempotencyClaim): Promise<boolean> {
  const res = await where(claim.scope)(db.deleteFrom('idempotency_keys')).where('state', '=', 'running').where('claim_token', '=', claim.token).executeTakeFirst();
  if (Number(res.numDeletedRows) > 0) return true;
  const lost = await where(claim.scope)(db.updateTable('idempotency_keys'))
    .set({ state: 'lost', claim_token: null })
    .where('state', '=', 'committed')
    .where('claim_token', '=', claim.token)
    .executeTakeFirst();
  return Number(lost.numUpdatedRows) > 0;
}

export async function purgeExpiredKeys(db: Kysely<DB>, clock: Clock): Promise<number> {
  const res = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', nowSeconds(clock)).executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Between attempts to record a claim's end while the database is not answering. */
const SETTLE_RETRY_MS = 1000;

/**
 * Records the end of a claim (`completeKey` or `releaseKey`); while the database cannot answer,
 * again every second in the background until it can, for as long as the claim's lease lasts.
 * The request's write has committed or rolled back already, so its answer neither waits for nor
 * fails with this bookkeeping: failing it answered 503 for a write that took effect and left the
 * claim `running` until its lease ran out, after which a retry with the same key made the write
 * a second time. Until the end is recorded a retry is answered 409 (7031). Resolves after the
 * first attempt: true when recorded, false when left to the background (or the claim was taken
 * over). Another error is thrown, as before. A process exiting first leaves the lease to end it.
 */
export async function settleKey(record: () => Promise<boolean>, isUnavailable: (err: unknown) => boolean, onGiveUp: (err: unknown) => void): Promise<boolean> {
  try {
    return await record();
  } catch (err) {
    if (!isUnavailable(err)) throw err;
  }
  const deadline = Date.now() + IDEMPOTENCY_LEASE_SECONDS * 1000;
  const retry = () => {
    record().catch((err: unknown) => {
      if (isUnavailable(err) && Date.now() + SETTLE_RETRY_MS < deadline) setTimeout(retry, SETTLE_RETRY_MS).unref();
      else onGiveUp(err);
    });
  };
  setTimeout(retry, SETTLE_RETRY_MS).unref();
  return false;
}
