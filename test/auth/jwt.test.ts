import { test, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT, generateKeyPair, exportSPKI, exportJWK, type CryptoKey, type JWTPayload } from 'jose';
import { createTestApp, as, firstError, type TestApp, type Seed } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { createJwtVerifier } from '../../src/auth/jwt.js';
import { ManualClock } from '../../src/shared/clock.js';
import { ConfigError, loadConfig } from '../../src/config.js';

/**
 * docs/spec-gaps.md, "Credentials and tokens": OAuth2 JWTs verified with jose against a configured key; ES256 and RS256 only,
 * the algorithm following the key; issuer and audience required; `sub` a user id or a linked
 * subject. A JWT is a broad credential.
 */
const ISS = 'https://idp.example.test/';
const AUD = 'workspace-platform';

let ec: { publicKey: CryptoKey; privateKey: CryptoKey };
let ecOther: { publicKey: CryptoKey; privateKey: CryptoKey };
let rsa: { publicKey: CryptoKey; privateKey: CryptoKey };
let rsaPs: { publicKey: CryptoKey; privateKey: CryptoKey };
let ecPem: string;
let rsaPem: string;

/** App with the EC key given as config (WSP_JWT_PUBLIC_KEY), timed by the app's ManualClock. */
/** App with the RSA key, built with createTestApp({ verifyJwt }). */
let hr: TestApp;
let sr: Seed;

const h = useTestApp(async () => {
  ec = await generateKeyPair('ES256', { extractable: true });
  ecOther = await generateKeyPair('ES256', { extractable: true });
  rsa = await generateKeyPair('RS256', { extractable: true });
  rsaPs = await generateKeyPair('PS256', { extractable: true });
  ecPem = await exportSPKI(ec.publicKey);
  rsaPem = await exportSPKI(rsa.publicKey);
  return {
    config: { jwt: { publicKey: ecPem, issuer: ISS, audience: AUD, jwksUrl: undefined } },
    setup: async () => {
      hr = await createTestApp({ verifyJwt: await createJwtVerifier({ publicKey: rsaPem, issuer: ISS, audience: AUD }) });
      sr = await hr.seed();
    },
  };
});
const s = h.seeded;
after(async () => {
  await hr.close();
});

const nowOf = (app: TestApp | 'real') => (app === 'real' ? Math.floor(Date.now() / 1000) : Math.floor(app.clock.nowMs() / 1000));

interface Claims {
  iss?: string | null;
  aud?: string | string[] | null;
  sub?: unknown;
  exp?: number | null;
  iat?: number | null;
  nbf?: number;
}

async function sign(key: CryptoKey | Uint8Array, alg: string, now: number, c: Claims = {}, header: Record<string, unknown> = {}): Promise<string> {
  const payload: JWTPayload = {};
  if (c.iat !== null) payload.iat = c.iat ?? now - 5;
  if (c.iss !== null) payload.iss = c.iss ?? ISS;
  if (c.aud !== null) payload.aud = c.aud ?? AUD;
  if (c.exp !== null) payload.exp = c.exp ?? now + 600;
  if (c.nbf !== undefined) payload.nbf = c.nbf;
  if (c.sub !== undefined) (payload as Record<string, unknown>).sub = c.sub;
  return new SignJWT(payload).setProtectedHeader({ alg, typ: 'JWT', ...header }).sign(key);
}
const es = (c: Claims = {}, key: CryptoKey = ec.privateKey) => sign(key, 'ES256', nowOf(h), { sub: s.owner.userId, ...c });
const rs = (c: Claims = {}) => sign(rsa.privateKey, 'RS256', nowOf('real'), { sub: sr.owner.userId, ...c });

function unsigned(payload: object, alg = 'none'): string {
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${enc({ alg, typ: 'JWT' })}.${enc(payload)}.`;
}

async function status(app: TestApp, token: string, url = '/v1/me', workspaceId?: string) {
  const res = await app.app.inject({ method: 'GET', url, headers: as(token, workspaceId) });
  if (res.statusCode === 401) {
    assert.equal(firstError(res.json()).code, 7010);
    assert.equal(res.headers['www-authenticate'], 'Bearer');
  }
  return res.statusCode;
}

describe('ES256 key from WSP_JWT_PUBLIC_KEY (SPKI PEM)', () => {
  test('accepted with the right issuer and audience; acts as the user named by sub', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/v1/me', headers: as(await es()) });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().credential, { kind: 'jwt', id: s.owner.userId });
    assert.equal(res.json().user.id, s.owner.userId);
    assert.equal(res.json().workspace, null);
    // An audience list containing ours is fine too.
    assert.equal(await status(h, await es({ aud: ['other', AUD] })), 200);
  });

  test('401 for a wrong or missing issuer or audience', async () => {
    assert.equal(await status(h, await es({ iss: 'https://evil.example.test/' })), 401);
    assert.equal(await status(h, await es({ iss: ISS.slice(0, -1) })), 401, 'issuer without its trailing slash');
    assert.equal(await status(h, await es({ iss: null })), 401);
    assert.equal(await status(h, await es({ aud: 'another-service' })), 401);
    assert.equal(await status(h, await es({ aud: null })), 401);
  });

  test('expiry and not-before are judged by the app clock', async () => {
    const now = nowOf(h);
    assert.equal(await status(h, await es({ exp: now - 1 })), 401, 'expired');
    assert.equal(await status(h, await es({ nbf: now + 600 })), 401, 'not yet valid');
    const short = await es({ exp: now + 60 });
    assert.equal(await status(h, short), 200);
    h.clock.advanceSeconds(61);
    assert.equal(await status(h, short), 401, 'expired once the clock moved past exp');
  });

  test('exp and iat are required, and a JWT lives at most WSP_JWT_MAX_LIFETIME_SECONDS (24 h by default): minted for longer, older, or issued in the future is 401', async () => {
    const now = nowOf(h);
    const DAY = 86_400;
    assert.equal(await status(h, await es({ exp: null })), 401, 'no exp: a token that never ends');
    assert.equal(await status(h, await es({ iat: null })), 401, 'no iat: its age cannot be bounded');
    assert.equal(await status(h, await es({ iat: now - 60, exp: now - 60 + DAY })), 200, 'exactly the longest lifetime');
    assert.equal(await status(h, await es({ iat: now - 60, exp: now - 60 + DAY + 1 })), 401, 'minted for a second longer');
    assert.equal(await status(h, await es({ iat: now, exp: now + 365 * DAY })), 401, 'minted for a year');
    assert.equal(await status(h, await es({ iat: now - DAY - 1, exp: now + 60 })), 401, 'older than the longest lifetime, though not expired');
    assert.equal(await status(h, await es({ iat: now + 3600, exp: now + 7200 })), 401, 'issued in the future');
    const lasting = await es({ iat: now, exp: now + DAY });
    assert.equal(await status(h, lasting), 200);
    h.clock.advanceSeconds(DAY - 10);
    assert.equal(await status(h, lasting), 200, 'still within its life');
    h.clock.advanceSeconds(20);
    assert.equal(await status(h, lasting), 401, 'past it');
  });

  test('the bound is a setting: WSP_JWT_MAX_LIFETIME_SECONDS', async () => {
    assert.equal(loadConfig({}).jwt.maxLifetimeSeconds, 86_400);
    assert.equal(loadConfig({ WSP_JWT_MAX_LIFETIME_SECONDS: '300' }).jwt.maxLifetimeSeconds, 300);
    assert.throws(() => loadConfig({ WSP_JWT_MAX_LIFETIME_SECONDS: '0' }), ConfigError);
    const clock = new ManualClock(h.clock.nowMs());
    const verify = await createJwtVerifier({ publicKey: ecPem, issuer: ISS, audience: AUD, maxLifetimeSeconds: 300 }, clock);
    const now = Math.floor(clock.nowMs() / 1000);
    assert.ok(await verify(await es({ iat: now, exp: now + 300 })), 'five minutes: accepted');
    assert.equal(await verify(await es({ iat: now, exp: now + 301 })), null, 'a second more: refused');
  });

  test('401 for a wrong signature, a tampered payload, or another key', async () => {
    const good = await es();
    const [head, payload, sig] = good.split('.') as [string, string, string];
    const other = Buffer.from(JSON.stringify({ iss: ISS, aud: AUD, sub: s.admin.userId, exp: nowOf(h) + 600 })).toString('base64url');
    assert.equal(await status(h, `${head}.${other}.${sig}`), 401, 'payload swapped');
    const flipped = sig.slice(0, 10) + (sig[10] === 'A' ? 'B' : 'A') + sig.slice(11);
    assert.equal(await status(h, `${head}.${payload}.${flipped}`), 401, 'signature changed');
    assert.equal(await status(h, `${head}.${payload}.`), 401, 'signature removed');
    assert.equal(await status(h, await es({}, ecOther.privateKey)), 401, 'signed by another key');
  });

  test('alg none is refused, however it is spelled', async () => {
    const claims = { iss: ISS, aud: AUD, sub: s.owner.userId, exp: nowOf(h) + 600 };
    for (const alg of ['none', 'None', 'NONE', 'nOnE']) assert.equal(await status(h, unsigned(claims, alg)), 401, alg);
    const good = (await es()).split('.');
    const noneHeader = Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url');
    assert.equal(await status(h, `${noneHeader}.${good[1]}.${good[2]}`), 401, 'alg none with a real signature attached');
  });

  test('algorithm confusion: HS256 signed with the public key PEM as the secret is refused', async () => {
    const now = nowOf(h);
    for (const secret of [ecPem, ecPem.trim(), JSON.stringify(await exportJWK(ec.publicKey))]) {
      const forged = await sign(new TextEncoder().encode(secret), 'HS256', now, { sub: s.owner.userId });
      assert.equal(await status(h, forged), 401);
    }
  });

  test('an RS256 token (the right claims, a real RSA key) is refused when the key is EC', async () => {
    assert.equal(await status(h, await sign(rsa.privateKey, 'RS256', nowOf(h), { sub: s.owner.userId })), 401);
    assert.equal(await status(h, await sign(rsaPs.privateKey, 'PS256', nowOf(h), { sub: s.owner.userId })), 401);
  });

  test('sub: a user id works; an unknown, missing, empty or non-string sub is 401, never a 500', async () => {
    assert.equal(await status(h, await es({ sub: s.member.userId })), 200);
    assert.equal(await status(h, await es({ sub: 'usr_00000000000000000000000000' })), 401, 'unknown user id');
    assert.equal(await status(h, await es({ sub: 'someone@idp' })), 401, 'unlinked subject');
    assert.equal(await status(h, await es({ sub: undefined })), 401, 'no sub');
    assert.equal(await status(h, await es({ sub: '' })), 401, 'empty sub');
    for (const sub of [123, true, ['usr_x'], { id: s.owner.userId }]) {
      assert.equal(await status(h, await es({ sub })), 401, `sub ${JSON.stringify(sub)}`);
    }
  });

  test('sub: an external subject linked with admin.linkSubject acts as that user', async () => {
    const subject = `auth0|${Date.now()}`;
    assert.equal(await status(h, await es({ sub: subject })), 401, 'not linked yet');
    await h.admin.linkSubject(s.admin.userId, subject);
    const res = await h.app.inject({ method: 'GET', url: '/v1/me', headers: as(await es({ sub: subject }), s.workspaceId) });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().user.id, s.admin.userId);
    assert.equal(res.json().credential.id, subject);
    assert.equal(res.json().role, 'admin');
    // A subject that looks like a user id but is only linked still resolves through the link.
    const lookalike = 'usr_linked_subject_not_an_id';
    await h.admin.linkSubject(s.member.userId, lookalike);
    const res2 = await h.app.inject({ method: 'GET', url: '/v1/me', headers: as(await es({ sub: lookalike })) });
    assert.equal(res2.json().user.id, s.member.userId);
  });

  test('a JWT is a broad credential: 403 without Service-Context, works with it, 403 for a workspace the user is not in', async () => {
    const token = await es();
    const without = await h.app.inject({ method: 'GET', url: '/v1/api_tokens', headers: as(token) });
    assert.equal(without.statusCode, 403);
    assert.equal(firstError(without.json()).code, 7021);
    assert.equal(await status(h, token, '/v1/api_tokens', s.workspaceId), 200);
    const other = await h.seed('Elsewhere');
    const foreign = await h.app.inject({ method: 'GET', url: '/v1/api_tokens', headers: as(token, other.workspaceId) });
    assert.equal(foreign.statusCode, 403);
    assert.equal(firstError(foreign.json()).code, 7022);
  });

  test('a JWT is not a session: DELETE /v1/sessions/current is 403 (7020)', async () => {
    const res = await h.app.inject({ method: 'DELETE', url: '/v1/sessions/current', headers: as(await es()) });
    assert.equal(res.statusCode, 403);
    assert.equal(firstError(res.json()).code, 7020);
  });

  test("roles follow the JWT's user: the owner creates a token (created_by = the user), a member may not", async () => {
    const owner = await es();
    const created = await h.app.inject({ method: 'POST', url: '/v1/api_tokens', headers: as(owner, s.workspaceId), payload: { name: 'by-jwt' } });
    assert.equal(created.statusCode, 201);
    const list = await h.app.inject({ method: 'GET', url: '/v1/api_tokens', headers: as(owner, s.workspaceId) });
    assert.equal(list.json().data.find((t: { id: string }) => t.id === created.json().id).created_by, s.owner.userId);
    const member = await es({ sub: s.member.userId });
    const denied = await h.app.inject({ method: 'POST', url: '/v1/api_tokens', headers: as(member, s.workspaceId), payload: { name: 'no' } });
    assert.equal(denied.statusCode, 403);
    assert.equal(firstError(denied.json()).code, 7023);
  });
});

describe('RS256 key, verifier given to createTestApp', () => {
  test('RS256 accepted; ES256, PS256 and HS256-with-the-PEM refused', async () => {
    assert.equal(await status(hr, await rs()), 200);
    const now = nowOf('real');
    assert.equal(await status(hr, await sign(ec.privateKey, 'ES256', now, { sub: sr.owner.userId })), 401);
    assert.equal(await status(hr, await sign(rsaPs.privateKey, 'PS256', now, { sub: sr.owner.userId })), 401);
    assert.equal(await status(hr, await sign(new TextEncoder().encode(rsaPem), 'HS256', now, { sub: sr.owner.userId })), 401);
    assert.equal(await status(hr, unsigned({ iss: ISS, aud: AUD, sub: sr.owner.userId, exp: now + 60 })), 401);
    assert.equal(await status(hr, await rs({ aud: 'x' })), 401);
  });
});

describe('createJwtVerifier settings', () => {
  test('a JWK public key works like the PEM; a PEM with escaped newlines (one-line env files) too', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const now = Math.floor(clock.nowMs() / 1000);
    const jwk = JSON.stringify(await exportJWK(ec.publicKey));
    const byJwk = await createJwtVerifier({ publicKey: jwk, issuer: ISS, audience: AUD }, clock);
    const token = await sign(ec.privateKey, 'ES256', now, { sub: 'x' });
    assert.equal((await byJwk(token))?.sub, 'x');
    assert.equal(await byJwk(await sign(rsa.privateKey, 'RS256', now, { sub: 'x' })), null);
    const oneLine = await createJwtVerifier({ publicKey: ecPem.trim().replace(/\n/g, '\\n'), issuer: ISS, audience: AUD }, clock);
    assert.equal((await oneLine(token))?.sub, 'x');
    const rsaJwk = await createJwtVerifier({ publicKey: JSON.stringify(await exportJWK(rsa.publicKey)), issuer: ISS, audience: AUD }, clock);
    assert.equal((await rsaJwk(await sign(rsa.privateKey, 'RS256', now, { sub: 'y' })))?.sub, 'y');
  });

  test('a key without issuer and audience, a private JWK, or a key of another kind is refused at start', async () => {
    await assert.rejects(createJwtVerifier({ publicKey: ecPem, audience: AUD }));
    await assert.rejects(createJwtVerifier({ publicKey: ecPem, issuer: ISS }));
    await assert.rejects(createJwtVerifier({ publicKey: JSON.stringify(await exportJWK(ec.privateKey)), issuer: ISS, audience: AUD }));
    const ed = await generateKeyPair('EdDSA', { extractable: true });
    await assert.rejects(createJwtVerifier({ publicKey: await exportSPKI(ed.publicKey), issuer: ISS, audience: AUD }));
    await assert.rejects(createJwtVerifier({ publicKey: 'not a key', issuer: ISS, audience: AUD }));
  });

  test('the server refuses to start with a key but no issuer or audience (loadConfig)', () => {
    const key = { WSP_JWT_PUBLIC_KEY: ecPem };
    assert.throws(() => loadConfig(key), ConfigError);
    assert.throws(() => loadConfig({ ...key, WSP_JWT_ISSUER: ISS }), ConfigError);
    assert.throws(() => loadConfig({ WSP_JWT_JWKS_URL: 'http://127.0.0.1/jwks', WSP_JWT_AUDIENCE: AUD }), ConfigError);
    assert.equal(loadConfig({ ...key, WSP_JWT_ISSUER: ISS, WSP_JWT_AUDIENCE: AUD }).jwt.issuer, ISS);
  });

  test('without any key, every JWT is refused', async () => {
    const none = await createJwtVerifier({});
    assert.equal(await none(await sign(ec.privateKey, 'ES256', nowOf('real'), { sub: 'x' })), null);
  });
});
