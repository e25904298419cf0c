import * as client from 'openid-client';
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { hashToken } from '../auth/credentials.js';
import { isUniqueViolation } from '../db/database.js';
import { newId } from '../shared/ids.js';
import { nowSeconds, type Clock } from '../shared/clock.js';
import { ApiError, ErrorCodes } from '../shared/errors.js';
import type { EventLog } from '../events/record.js';
import { originOfClient, type Client } from './service.js';
import { emailKey, identity } from '../identity/service.js';
import { createSession, type SessionPolicy } from '../sessions/service.js';
import { invitationStore } from './store.js';
import { oidcLoginStore } from './oidc-store.js';

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
const LOGIN_SECONDS = 600;
const FALLBACK_RETURN = '/console/';

/**
 * Where a browser may be sent back to: a path of this server (`/console/...`, `/device?...`),
 * never another origin (`//evil.example`, `https://...`, a backslash browsers read as `/`).
 */
export function safeReturnTo(raw: string | undefined): string {
  if (!raw || raw.length > 2048 || !raw.startsWith('/') || raw.startsWith('//') || /[\\\u0000-\u001f]/.test(raw)) return FALLBACK_RETURN;
  return raw;
}

const failed = (reason: string) => new ApiError('OIDC_FAILED', { message: `Single sign-on failed: ${reason}. No session was made; start again.` });

/**
 * Single sign-on with OpenID Connect (CONTRACT §9): the authorization code flow with PKCE, a
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
    /** The provider's authorization URL for a new login; what the callback needs is kept by the state's hash. */
    async start(returnTo: string | undefined): Promise<string> {
      const config = await provider().catch((err: unknown) => {
        throw new ApiError('OIDC_UNAVAILABLE', { message: `The OpenID provider cannot be reached: ${(err as Error).message.slice(0, 200)}` });
      });
      const state = client.randomState();
      const nonce = client.randomNonce();
      const verifier = client.randomPKCECodeVerifier();
      // Logins abandoned at the provider are dropped as new ones start: the table stays small.
      await oidcLoginStore.purgeExpired(db, nowSeconds(clock));
      await oidcLoginStore.insert(db, { state_hash: hashToken(state), code_verifier: verifier, nonce, return_to: safeReturnTo(returnTo), expires_at: nowSeconds(clock) + LOGIN_SECONDS });
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: 'openid email profile',
        state,
        nonce,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      });
      return url.href;
    },

    /**
     * The provider sends the browser back here. The state names a login this server started (used
     * once); the code is exchanged with its PKCE verifier and the ID token checked. Answers the new
     * session and where to send the browser.
     */
    async callback(query: Record<string, string | undefined>, client_: Client) {
      try {
        return await finish(query, client_);
      } catch (err) {
        // A single sign-on that failed is a failed sign-in (CONTRACT §11), whoever it was.
        if (err instanceof ApiError && err.entries[0]?.code === ErrorCodes.OIDC_FAILED.code) {
          const source = { workspaceId: null, actor: { kind: 'anonymous' as const, id: null }, credentialId: null, origin: originOfClient(client_) };
          await deps.events.record(db, source, 'session.failed', 'none', { method: 'oidc' });
        }
        throw err;
      }
    },
  };

  async function finish(query: Record<string, string | undefined>, client_: Client) {
    {
      const state = query.state;
      if (!state) throw failed('the provider sent no state');
      const login = await oidcLoginStore.take(db, hashToken(state));
      if (!login || login.expires_at <= nowSeconds(clock)) throw failed('this sign-in was not started here, was already used, or took longer than 10 minutes');
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
      const userId = await userFor(config.serverMetadata().issuer, claims);
      const session = await createSession(db, clock, userId, deps.sessions, { issuedBy: 'oidc', ip: client_.ip, userAgent: client_.userAgent, event: { log: deps.events, origin: originOfClient(client_) } });
      return { session, returnTo: login.return_to };
    }
  }

  /** The user the provider's account is: linked before, or with this verified email, or new when allowed. */
  async function userFor(issuer: string, claims: Claims): Promise<string> {
    const linked = await identity.userIdForOidc(db, issuer, claims.sub);
    if (linked) return linked;
    const email = typeof claims.email === 'string' && claims.email_verified === true ? claims.email : undefined;
    const now = nowSeconds(clock);
    if (email) {
      const known = await identity.userByEmail(db, email);
      if (known) {
        await identity.linkOidc(db, { issuer, subject: claims.sub, user_id: known.id, created_at: now });
        return known.id;
      }
    }
    const invited = email !== undefined && (await invitationStore.pendingFor(db, emailKey(email), now));
    if (!invited && !settings.autoCreate) throw new ApiError('SIGN_IN_REFUSED');
    const userId = newId('usr');
    const name = typeof claims.name === 'string' ? claims.name.slice(0, 100) : (email ?? null);
    try {
      await db.transaction().execute(async (trx) => {
        await identity.createUser(trx, { id: userId, name, email: email ?? null, created_at: now });
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

export type Oidc = ReturnType<typeof createOidc>;
