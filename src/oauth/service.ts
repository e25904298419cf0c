import { randomBytes } from 'node:crypto';
import type { ServiceDeps } from '../service-deps.js';
import type { RequestContext } from '../auth/principal.js';
import { hashToken } from '../auth/credentials.js';
import { createSession } from '../sessions/service.js';
import { isUniqueViolation } from '../db/database.js';
import { nowSeconds } from '../shared/clock.js';
import { newId } from '../shared/ids.js';
import { ApiError } from '../shared/errors.js';
import { OAuthError } from './oauth-error.js';
import { deviceStore } from './store.js';
import { GUESS_WINDOW_SECONDS, GuessLimiter, MAX_LOGINS_STARTED_PER_IP } from './guess-limiter.js';
import { DEVICE_CODE_GRANT, type DeviceAuthorizationResponse, type DeviceLogin, type TokenResponse } from './schemas.js';
import { displayUserCode, newUserCode, normalizeUserCode } from './user-code.js';
import { writeTransaction } from '../db/write-transaction.js';

/** docs/spec-gaps.md, "Credentials and tokens": a code lives 15 minutes; the device polls every 5 s, 5 s more per slow_down. */
export const DEVICE_CODE_TTL_SECONDS = 900;
export const POLL_INTERVAL_SECONDS = 5;
export const SLOW_DOWN_SECONDS = 5;
/**
 * Polls are timed by arrival: network jitter can bring one a little earlier than the device
 * sent it. Half a second of grace keeps an honest device from being slowed down for that.
 */
export const POLL_JITTER_MS = 500;

export type Decision = 'approve' | 'deny';

export function createDeviceService({ db, clock, config, events }: Pick<ServiceDeps, 'db' | 'clock' | 'config' | 'events'>) {
  const clients = new Set(config.oauthClientIds);
  const guesses = new GuessLimiter(db);
  const verificationUri = `${config.publicUrl}/device`;

  function requireClient(clientId: string): void {
    if (!clients.has(clientId)) throw new OAuthError('invalid_client', `Unknown client_id "${clientId.slice(0, 64)}"`);
  }

  return {
    verificationUri,

    /** RFC 8628 §3.1-3.2: a new device code and user code. */
    async start(body: { client_id: string; scope?: string | undefined }, clientIp: string): Promise<DeviceAuthorizationResponse> {
      requireClient(body.client_id);
      if (body.scope !== undefined && body.scope.trim() !== '') throw new OAuthError('invalid_scope', 'This server defines no scopes; send none');
      const now = nowSeconds(clock);
      const retryAfter = await guesses.takeStart(clientIp, now);
      if (retryAfter > 0) {
        throw new OAuthError('slow_down', `More than ${MAX_LOGINS_STARTED_PER_IP} device logins were started from this address in ${GUESS_WINDOW_SECONDS / 60} minutes; retry after ${retryAfter} s`, {
          retryAfterSeconds: retryAfter,
        });
      }
      const deviceCode = randomBytes(32).toString('base64url');
      // A clash with a live code (about one in 10^8 per live code) just draws again.
      for (let attempt = 0; ; attempt++) {
        const userCode = newUserCode();
        try {
          await deviceStore.insert(db, {
            id: newId('dev'),
            client_id: body.client_id,
            device_code_hash: hashToken(deviceCode),
            user_code: userCode,
            state: 'pending',
            user_id: null,
            interval_seconds: POLL_INTERVAL_SECONDS,
            last_polled_ms: null,
            created_at: now,
            decided_at: null,
            approver_not_after: null,
            expires_at: now + DEVICE_CODE_TTL_SECONDS,
          });
          const shown = displayUserCode(userCode);
          return {
            device_code: deviceCode,
            user_code: shown,
            verification_uri: verificationUri,
            verification_uri_complete: `${verificationUri}?user_code=${shown}`,
            expires_in: DEVICE_CODE_TTL_SECONDS,
            interval: POLL_INTERVAL_SECONDS,
          };
        } catch (err) {
          if (!isUniqueViolation(err) || attempt >= 4) throw err;
        }
      }
    },

    /**
     * RFC 8628 §3.4-3.5: one poll of the device. The session is created here, at redemption,
     * so no usable secret ever waits in the database between approval and the next poll.
     */
    async poll(body: { grant_type: string; client_id: string; device_code: string }, device: { userAgent?: string | undefined; ip: string; requestId?: string }): Promise<TokenResponse> {
      if (body.grant_type !== DEVICE_CODE_GRANT) throw new OAuthError('unsupported_grant_type', `grant_type must be ${DEVICE_CODE_GRANT}`);
      requireClient(body.client_id);
      const row = await deviceStore.byDeviceCodeHash(db, hashToken(body.device_code));
      // Another client's code is as unknown to this one as a made-up code (RFC 6749 §5.2).
      if (!row || row.client_id !== body.client_id || row.state === 'redeemed') {
        throw new OAuthError('invalid_grant', 'The device_code is not valid (unknown, or already redeemed)');
      }
      if (nowSeconds(clock) >= row.expires_at) throw new OAuthError('expired_token', 'The device_code has expired; start a new login');
      const nowMs = clock.nowMs();
      if (!(await deviceStore.markPolled(db, row.id, nowMs, POLL_JITTER_MS))) {
        await deviceStore.slowDown(db, row.id, nowMs, SLOW_DOWN_SECONDS);
        throw new OAuthError('slow_down', `Polled sooner than the interval; poll every ${row.interval_seconds + SLOW_DOWN_SECONDS} seconds from now on`);
      }
      if (row.state === 'pending') throw new OAuthError('authorization_pending', 'The user has not approved or denied yet');
      if (row.state === 'denied') throw new OAuthError('access_denied', 'The user denied this login');
      const token = await db.transaction().execute(async (trx) => {
        if (!(await deviceStore.redeem(trx, row.id))) return null;
        const origin = { requestId: device.requestId ?? '', ip: device.ip ?? null, userAgent: device.userAgent?.slice(0, 512) ?? null };
        const how = { issuedBy: 'device' as const, userAgent: device.userAgent, ip: device.ip, notAfter: row.approver_not_after, event: { log: events, origin } };
        return (await createSession(trx, clock, row.user_id!, config.sessions, how)).token;
      });
      if (!token) throw new OAuthError('invalid_grant', 'The device_code was already redeemed');
      return { access_token: token, token_type: 'Bearer' };
    },

    /** A signed-in user approves or denies the login that shows `typedCode`. */
    async decide(ctx: RequestContext, typedCode: string, clientIp: string, decision: Decision): Promise<DeviceLogin> {
      const userId = ctx.principal.kind === 'api_token' ? null : ctx.principal.userId;
      if (!userId) throw new ApiError('USER_REQUIRED');
      const now = nowSeconds(clock);
      const keys = [`ip:${clientIp}`, `user:${userId}`];
      await guesses.take(keys, now);
      const code = normalizeUserCode(typedCode);
      const row = code ? await deviceStore.liveByUserCode(db, code, now) : undefined;
      if (!row) throw new ApiError('USER_CODE_UNKNOWN', { path: ['body', 'user_code'] });
      await guesses.giveBack(keys);
      const state = decision === 'approve' ? 'approved' : 'denied';
      // A login approved with a JWT may not outlive it (docs/spec-gaps.md, "Accounts and sign-in").
      const notAfter = ctx.principal.kind === 'jwt' ? ctx.principal.expiresAt : null;
      await writeTransaction(db, ctx, async (trx) => {
        if (!(await deviceStore.decide(trx, row.id, state, userId, now, notAfter))) {
          throw new ApiError('DEVICE_LOGIN_DECIDED', { path: ['body', 'user_code'] });
        }
        await events.record(trx, ctx, decision === 'approve' ? 'device_authorization.approved' : 'device_authorization.denied', row.id, { client_id: row.client_id });
      });
      return {
        id: row.id,
        client_id: row.client_id,
        user_code: displayUserCode(row.user_code),
        state,
        created_at: row.created_at,
        decided_at: now,
        expires_at: row.expires_at,
      };
    },
  };
}

export type DeviceService = ReturnType<typeof createDeviceService>;
