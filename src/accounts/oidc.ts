import { randomBytes } from 'node:crypto';
import * as client from 'openid-client';
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { classifyCredential, hashToken } from '../auth/credentials.js';
import { sameSecret } from '../http/cookies.js';
import { countAttempt } from '../db/window-counter.js';
import { isUniqueViolation } from '../db/database.js';
import { newId } from '../shared/ids.js';
import { nowSeconds, type Clock } from '../shared/clock.js';
import { ApiError, ErrorCodes } from '../shared/errors.js';
import type { EventLog } from '../events/record.js';
import { originOfClient, type Client } from './service.js';
import { emailKey, identity } from '../identity/service.js';
import { createSession, sessionForToken, type SessionPolicy } from '../sessions/service.js';
import { invitationStore } from './store.js';
import { oidcLoginStore } from './oidc-store.js';
import { MAX_RETURN_TO } from './schemas.js';

/** WSP_OIDC_* (src/config.ts). */
export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** WSP_OIDC_AUTO_CREATE: a stranger the provider vouches for becomes a user. */
  autoCreate: boolean;
}

/** What the ID token (and UserInfo) say of the person. */
type Claims = { sub: string; email?: unknown; email_verified?: unknown; name?: unknown };

/** A login under way lasts this long between start and callback. */
export const LOGIN_SECONDS = 600;
/** Single sign-ons started per client address in a window: each keeps a row until its callback or its expiry. */
export const MAX_OIDC_STARTS_PER_IP = 60;
export const OIDC_START_WINDOW_SECONDS = 900;

const FALLBACK_RETURN = '/console/';

/**
 * Where a browser may be sent back to: a path of this server (`/console/...`, `/device?...`),
 * never another origin (`//evil.example`, `https://...`, a backslash browsers read as `/`).
 */
export function safeReturnTo(raw: string | undefined): string {
  if (!raw || raw.length > MAX_RETURN_TO || !raw.startsWith('/') || raw.startsWith('//') || /[\\\u0000-\u001f]/.test(raw)) return FALLBACK_RETURN;
  return raw;
}

const failed = (reason: string) => new ApiError('OIDC_FAILED', { message: `Single sign-on failed: ${reason}. No session was made; start again.` });

/**
 * Single sign-on with OpenID Connect (docs/spec-gaps.md, "Accounts and sign-in"): the authorization code flow with PKCE, a
 * state and a nonce, through `openid-client`, which also checks the ID token (signature, issuer,
 * audience, expiry, nonce). A user is found by the provider's subject, then by a verified
 * email (which links the subject); a stranger is let in only with a pending invitation for
 * their email or when WSP_OIDC_AUTO_CREATE is on.
 */
export function createOidc(deps: { db: Kysely<DB>; clock: Clock; sessions: SessionPolicy; publicUrl: string; settings: OidcSettings; events: EventLog }) {
  const { db, clock, settings } = deps;
  const redirectUri = `${deps.publicUrl}/v1/auth/oidc/callback`;
  let configuration: Promise<client.Configuration> | undefined;

  /** The provider's metadata, discovered once (again after a failure). */
  function provider(): Promise<client.Configuration> {
    if (!configuration) {
      const issuer = new URL(settings.issuer);
      // Plain http only for a provider on this machine (the tests' own): config refuses it elsewhere.
      // The ID token's signature is checked against the provider's keys too (OpenID Connect lets a
      // client trust TLS alone for a token from the token endpoint; the platform does not).
      const insecure = issuer.protocol === 'http:' ? [client.allowInsecureRequests] : [];
      const execute = { execute: [...insecure, client.enableNonRepudiationChecks] };
      configuration = client.discovery(issuer, settings.clientId, undefined, client.ClientSecretBasic(settings.clientSecret), { ...execute, timeout: 10 });
      configuration.catch(() => (configuration = undefined));
    }
    return configuration;
  }

  return {
    /**
     * The provider's authorization URL for a new login, and the binding the browser keeps as a
     * cookie until the callback (RFC 9700 §4.7.1: a login CSRF sends a victim's browser the
     * attacker's callback; without the cookie of the browser that started it, the callback is
     * refused). What the callback needs is kept by the state's hash. Starts are limited per client
     * address: each keeps a row until it ends or expires.
     */
    async start(returnTo: string | undefined, clientIp: string): Promise<{ url: string; binding: string }> {
      const now = nowSeconds(clock);
      const { failures, window_start } = await countAttempt(db, 'sign_in_limits', `oidc_start:${clientIp}`, now, OIDC_START_WINDOW_SECONDS);
      if (failures > MAX_OIDC_STARTS_PER_IP) {
        const wait = String(Math.max(1, window_start + OIDC_START_WINDOW_SECONDS - now));
        throw new ApiError('OIDC_STARTS_LIMITED', { headers: { 'retry-after': wait }, metadata: { limit: String(MAX_OIDC_STARTS_PER_IP), retry_after: wait } });
      }
      const config = await provider().catch((err: unknown) => {
        throw new ApiError('OIDC_UNAVAILABLE', { message: `The OpenID provider cannot be reached: ${(err as Error).message.slice(0, 200)}` });
      });
      const state = client.randomState();
      const nonce = client.randomNonce();
      const verifier = client.randomPKCECodeVerifier();
      const binding = randomBytes(32).toString('base64url');
      await oidcLoginStore.insert(db, {
        state_hash: hashToken(state),
        code_verifier: verifier,
        nonce,
        return_to: safeReturnTo(returnTo),
        expires_at: now + LOGIN_SECONDS,
        browser_hash: hashToken(binding),
      });
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: 'openid email profile',
        state,
        nonce,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      });
      return { url: url.href, binding };
    },

    /**
     * The provider sends the browser back here. The state names a login this server started (used
     * once) in this very browser (its binding cookie); the code is exchanged with its PKCE verifier
     * and the ID token checked. `browser.session`: the browser's own `wsp_session`, if any (how a
     * signed-in account proves its address). Answers the new session and where to send the browser.
     */
    async callback(query: Record<string, string | undefined>, browser: { binding: string | undefined; session: string | undefined }, client_: Client) {
      try {
        return await finish(query, browser, client_);
      } catch (err) {
        // A single sign-on that failed is a failed sign-in (docs/spec-gaps.md, "Events and the audit log"), whoever it was.
        if (err instanceof ApiError && err.entries[0]?.code === ErrorCodes.OIDC_FAILED.code) {
          const source = { workspaceId: null, actor: { kind: 'anonymous' as const, id: null }, credentialId: null, origin: originOfClient(client_) };
          await deps.events.record(db, source, 'session.failed', 'none', { method: 'oidc' });
        }
        throw err;
      }
    },
  };

  async function finish(query: Record<string, string | undefined>, browser: { binding: string | undefined; session: string | undefined }, client_: Client) {
    {
      const state = query.state;
      if (!state) throw failed('the provider sent no state');
      const login = await oidcLoginStore.take(db, hashToken(state));
      if (!login || login.expires_at <= nowSeconds(clock)) throw failed('this sign-in was not started here, was already used, or took longer than 10 minutes');
      if (browser.binding === undefined || login.browser_hash === null || !sameSecret(hashToken(browser.binding), login.browser_hash)) {
        throw failed('this sign-in was started in another browser (or this browser refused its cookie); start again here');
      }
      if (query.error) throw failed(`the provider answered ${query.error.slice(0, 100)}${query.error_description ? ` (${query.error_description.slice(0, 200)})` : ''}`);
      const config = await provider().catch((err: unknown) => {
        throw new ApiError('OIDC_UNAVAILABLE', { message: `The OpenID provider cannot be reached: ${(err as Error).message.slice(0, 200)}` });
      });
      const current = new URL(redirectUri);
      for (const [k, v] of Object.entries(query)) if (v !== undefined) current.searchParams.set(k, v);
      let claims: Claims;
      try {
        const tokens = await client.authorizationCodeGrant(config, current, { pkceCodeVerifier: login.code_verifier, expectedState: state, expectedNonce: login.nonce, idTokenExpected: true });
        const idToken = tokens.claims();
        if (!idToken) throw new Error('no ID token');
        // Many providers (this one's default included) put email and name only in UserInfo; its
        // answer must be about the same subject as the ID token.
        const info = idToken.email === undefined ? await client.fetchUserInfo(config, tokens.access_token, idToken.sub) : {};
        claims = { ...info, ...idToken };
      } catch (err) {
        throw failed(`the code or the ID token was refused (${(err as Error).message.slice(0, 200)})`);
      }
      const userId = await userFor(config.serverMetadata().issuer, claims, await signedInUser(browser.session), client_);
      const session = await createSession(db, clock, userId, deps.sessions, {
        issuedBy: 'oidc',
        ip: client_.ip,
        userAgent: client_.userAgent,
        event: { log: deps.events, origin: originOfClient(client_) },
      });
      return { session, returnTo: login.return_to };
    }
  }

  /** The user of the browser's live session, if it has one. */
  async function signedInUser(cookie: string | undefined): Promise<string | null> {
    const shape = cookie === undefined ? null : classifyCredential(cookie);
    if (shape?.kind !== 'session') return null;
    return (await sessionForToken(db, shape.hash, nowSeconds(clock), deps.sessions))?.userId ?? null;
  }

  /**
   * The user the provider's account is (docs/spec-gaps.md, "Whose address is it"): linked before;
   * else the account holding the verified email, if that account's address is proven; else the
   * browser's own signed-in account holding that unproven address, which proves it now; else a new
   * user, when invited or WSP_OIDC_AUTO_CREATE allows, who takes the address from an account that
   * never proved it. Single sign-on never links to an unproven address.
   */
  async function userFor(issuer: string, claims: Claims, browserUser: string | null, client_: Client): Promise<string> {
    const linked = await identity.userIdForOidc(db, issuer, claims.sub);
    if (linked) return linked;
    const email = typeof claims.email === 'string' && claims.email_verified === true ? claims.email : undefined;
    const now = nowSeconds(clock);
    const holder = email === undefined ? undefined : await identity.userByEmail(db, email);
    if (holder && holder.email_verified === 1) {
      await identity.linkOidc(db, { issuer, subject: claims.sub, user_id: holder.id, created_at: now });
      return holder.id;
    }
    const origin = originOfClient(client_);
    if (holder && holder.id === browserUser) {
      await db.transaction().execute(async (trx) => {
        await identity.linkOidc(trx, { issuer, subject: claims.sub, user_id: holder.id, created_at: now });
        await identity.verifyEmail(trx, holder.id);
        await deps.events.record(trx, { workspaceId: null, actor: { kind: 'user', id: holder.id }, credentialId: null, origin }, 'user.email_verified', holder.id, {
          email: holder.email,
          method: 'oidc',
        });
      });
      return holder.id;
    }
    const invited = email !== undefined && (await invitationStore.pendingFor(db, emailKey(email), now));
    if (!invited && !settings.autoCreate) {
      throw new ApiError('SIGN_IN_REFUSED', holder ? { message: UNPROVEN_HOLDER } : {});
    }
    const userId = newId('usr');
    const name = typeof claims.name === 'string' ? claims.name.slice(0, 100) : (email ?? null);
    try {
      await db.transaction().execute(async (trx) => {
        // The provider vouches for the address: an account that never proved it gives it up.
        if (holder && (await identity.releaseUnverifiedEmail(trx, holder.id))) {
          const system = { workspaceId: null, actor: { kind: 'system' as const, id: null }, credentialId: null, origin };
          await deps.events.record(trx, system, 'user.email_released', holder.id, { email: holder.email, to_user_id: userId, method: 'oidc' });
        }
        await identity.createUser(trx, { id: userId, name, email: email ?? null, emailVerified: email !== undefined, created_at: now });
        await identity.linkOidc(trx, { issuer, subject: claims.sub, user_id: userId, created_at: now });
      });
    } catch (err) {
      // Two callbacks of one account at once: the other made the user.
      const other = isUniqueViolation(err) ? await identity.userIdForOidc(db, issuer, claims.sub) : null;
      if (other) return other;
      throw err;
    }
    return userId;
  }
}

/** Why a provider-vouched person with no invitation is refused when an unproven account holds their address. */
const UNPROVEN_HOLDER =
  'Single sign-on found no user for this account and nobody invited its email. An account that never proved it controls this address holds it: if that account is yours, sign in to it with its password, then sign in with single sign-on from the same browser to prove the address; otherwise ask for an invitation.';

export type Oidc = ReturnType<typeof createOidc>;
