import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import type { SessionIssuer } from './tables.js';
import { hashToken, newSessionToken, TOUCH_INTERVAL_SECONDS } from '../auth/credentials.js';
import { listReadOf, type ListParts, type ListRead } from '../auth/authenticator.js';
import { canonicalId, newId } from '../shared/ids.js';
import { nowSeconds, type Clock } from '../shared/clock.js';
import { notFound } from '../shared/errors.js';
import { sessionStore, type SessionRow } from './store.js';
import { pageById, type CursorCodec } from '../shared/cursor.js';
import { inTransaction } from '../db/database.js';
import type { EventLog, RequestOrigin } from '../events/record.js';
import type { RequestContext } from '../auth/principal.js';
import { writeTransaction } from '../db/write-transaction.js';

/** Idle expiry of a session: 30 days, extended on use. */
export const SESSION_IDLE_SECONDS = 30 * 24 * 3600;

/** How long sessions may live at most, and how many one user may hold (configuration). */
export interface SessionPolicy {
  /** WSP_SESSION_MAX_DAYS in seconds: from creation, whatever the use. */
  maxSeconds: number;
  /** WSP_SESSIONS_PER_USER_MAX: a new session beyond it ends the user's least recently used one. */
  perUser: number;
}

export interface NewSession {
  issuedBy: SessionIssuer;
  userAgent?: string | undefined;
  ip?: string | undefined;
  /** A hard end (Unix seconds), e.g. the exp of the JWT that approved a device login. */
  notAfter?: number | null | undefined;
  /** Records `session.created` in the session's transaction (docs/spec-gaps.md, "Events and the audit log"); absent for an operator's session. */
  event?: { log: EventLog; origin?: RequestOrigin | undefined } | undefined;
}

/** When a session ends if it is not used again: the earliest of its idle expiry, its absolute lifetime and its hard end. */
export function sessionEnd(s: Pick<SessionRow, 'created_at' | 'expires_at' | 'not_after'>, policy: SessionPolicy): number {
  return Math.min(s.expires_at, s.created_at + policy.maxSeconds, s.not_after ?? Number.MAX_SAFE_INTEGER);
}

/**
 * Creates a session for a user; the plaintext token is returned once and never stored. One user
 * holds at most `policy.perUser` sessions: the least recently used ones beyond are ended, so
 * minting sessions (a device login each) cannot multiply what one person holds.
 */
export async function createSession(
  db: Kysely<DB>,
  clock: Clock,
  userId: string,
  policy: SessionPolicy,
  how: NewSession,
): Promise<{ id: string; token: string; expiresAt: number; csrfToken: string }> {
  const token = newSessionToken();
  const csrfToken = randomBytes(24).toString('base64url');
  const now = nowSeconds(clock);
  const id = newId('ses');
  const row = {
    id,
    user_id: userId,
    token_hash: hashToken(token),
    created_at: now,
    last_used_at: now,
    expires_at: now + SESSION_IDLE_SECONDS,
    issued_by: how.issuedBy,
    user_agent: how.userAgent ? how.userAgent.slice(0, USER_AGENT_MAX) : null,
    ip: how.ip ?? null,
    not_after: how.notAfter ?? null,
    csrf_token: csrfToken,
  };
  await inTransaction(db, async (trx) => {
    await sessionStore.insert(trx, row);
    await sessionStore.endBeyond(trx, userId, policy.perUser);
    if (how.event) {
      const source = { workspaceId: null, actor: { kind: 'user' as const, id: userId }, credentialId: id, origin: how.event.origin };
      await how.event.log.record(trx, source, 'session.created', id, { issued_by: how.issuedBy });
    }
  });
  return { id, token, expiresAt: sessionEnd(row, policy), csrfToken };
}

/** What a listed User-Agent keeps: enough to recognise a browser or a CLI. */
const USER_AGENT_MAX = 256;

/**
 * The live session a token's hash names, for the authenticator (every request with a session
 * token): null when there is none or it ended. Use extends the idle expiry, written at most once
 * a minute; the absolute lifetime and a hard end are never extended.
 */
export async function sessionForToken(
  db: Kysely<DB>,
  tokenHash: string,
  now: number,
  policy: SessionPolicy,
  lists?: ListParts,
): Promise<{ userId: string; sessionId: string; csrfToken: string | null; expiresAt: number; listRead: readonly ListRead[] | null } | null> {
  const s = lists === undefined ? await sessionStore.byHash(db, tokenHash) : await sessionStore.byHashWithList(db, tokenHash, lists);
  if (!s || sessionEnd(s, policy) <= now) return null;
  const touched = now - s.last_used_at >= TOUCH_INTERVAL_SECONDS;
  if (touched) await sessionStore.touch(db, s.id, now, now + SESSION_IDLE_SECONDS);
  const expiresAt = sessionEnd(touched ? { ...s, expires_at: now + SESSION_IDLE_SECONDS } : s, policy);
  const listRead = listReadOf(lists, s.user_id, s, touched);
  return { userId: s.user_id, sessionId: s.id, csrfToken: s.csrf_token, expiresAt, listRead };
}

/**
 * Of these sessions, the ids of those still live at `now`: not revoked, not past their idle expiry,
 * absolute lifetime or hard end. For the live notification streams' check of every stream at once.
 */
export async function liveSessionIds(db: Kysely<DB>, ids: readonly string[], now: number, policy: SessionPolicy): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  return new Set((await sessionStore.ends(db, ids)).filter((s) => sessionEnd(s, policy) > now).map((s) => s.id));
}

/** Ends a session at once: its token is refused from the next request on. */
export async function endSession(db: Kysely<DB>, sessionId: string): Promise<void> {
  await sessionStore.delete(db, sessionId);
}

/** Ends a session named by an operator; false when there is none. */
export async function endSessionById(db: Kysely<DB>, sessionId: string): Promise<boolean> {
  return sessionStore.deleteById(db, canonicalId('ses', sessionId));
}

/** Ends every session of a user (an operator's `session revoke --user --all`); answers how many. */
export async function endSessionsOf(db: Kysely<DB>, userId: string): Promise<number> {
  return sessionStore.deleteOfUser(db, userId);
}

export function createSessionService({ db, clock, cursors, policy, events }: { db: Kysely<DB>; clock: Clock; cursors: CursorCodec; policy: SessionPolicy; events: EventLog }) {
  return {
    /** The caller's own live sessions, newest first. */
    async list(userId: string, currentSessionId: string | null, page: { limit: number; cursor: string | undefined }) {
      const now = nowSeconds(clock);
      return pageById(
        cursors,
        `sessions:${userId}`,
        page,
        (after, take) => sessionStore.page(db, userId, now, policy.maxSeconds, take, after),
        (s) => ({
          id: s.id,
          created_at: s.created_at,
          last_used_at: s.last_used_at,
          expires_at: sessionEnd(s, policy),
          issued_by: s.issued_by,
          user_agent: s.user_agent,
          ip: s.ip,
          current: s.id === currentSessionId,
        }),
      );
    },

    /** Ends the session making the request (`DELETE /v1/sessions/current`). */
    endCurrent: (ctx: RequestContext, sessionId: string) =>
      writeTransaction(db, ctx, async (trx) => {
        await endSession(trx, sessionId);
        await events.record(trx, ctx, 'session.revoked', sessionId, { current: true });
      }),

    /** Ends one of the caller's sessions; another user's is as unknown as a made-up id (404). */
    async revoke(ctx: RequestContext, userId: string, rawId: string) {
      const id = canonicalId('ses', rawId);
      await writeTransaction(db, ctx, async (trx) => {
        if (!(await sessionStore.deleteOwn(trx, userId, id))) throw notFound('Session');
        await events.record(trx, ctx, 'session.revoked', id, { current: false });
      });
    },
  };
}

export type SessionService = ReturnType<typeof createSessionService>;
