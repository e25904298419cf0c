import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT, generateKeyPair, exportSPKI } from 'jose';

type KeyLike = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
import { as } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { createJwtVerifier } from '../../src/auth/jwt.js';
import { dereferenced } from '../helpers/openapi-deref.js';

/**
 * Every authenticated route of the OpenAPI document refuses every kind of bad credential with
 * the same 401, before looking at anything else of the request.
 */
let signingKey: KeyLike;
let otherKey: KeyLike;
const ISS = 'https://issuer.test';
const AUD = 'workspace-platform';

const h = useTestApp(async () => {
  const pair = await generateKeyPair('ES256');
  signingKey = pair.privateKey;
  otherKey = (await generateKeyPair('ES256')).privateKey;
  const verifyJwt = await createJwtVerifier({ publicKey: await exportSPKI(pair.publicKey), issuer: ISS, audience: AUD });
  return {
    verifyJwt,
  };
});
const s = h.seeded;

async function jwt(claims: { iss?: string; aud?: string; sub?: string; exp?: number }, key: KeyLike = signingKey): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'ES256' })
    .setIssuer(claims.iss ?? ISS)
    .setAudience(claims.aud ?? AUD)
    .setSubject(claims.sub ?? s.owner.userId)
    .setIssuedAt(now - 10)
    .setExpirationTime(claims.exp ?? now + 600)
    .sign(key);
}

function unsigned(sub: string): string {
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${enc({ alg: 'none', typ: 'JWT' })}.${enc({ iss: ISS, aud: AUD, sub, exp: Math.floor(Date.now() / 1000) + 600 })}.`;
}

test('every authenticated route answers 401 to every bad credential', async () => {
  const now = Math.floor(h.clock.nowMs() / 1000);
  // A revoked token, an expired token, a revoked session.
  const revoked = (await h.app.inject({ method: 'POST', url: '/v1/api_tokens', headers: as(s.owner.session, s.workspaceId), payload: { name: 'r' } })).json();
  assert.equal((await h.app.inject({ method: 'DELETE', url: `/v1/api_tokens/${revoked.id}`, headers: as(s.owner.session, s.workspaceId) })).statusCode, 204);
  const expiring = (await h.app.inject({ method: 'POST', url: '/v1/api_tokens', headers: as(s.owner.session, s.workspaceId), payload: { name: 'e', expires_at: now + 5 } })).json();
  const { session_token: gone } = await h.admin.createSession(s.member.userId);
  assert.equal((await h.app.inject({ method: 'DELETE', url: '/v1/sessions/current', headers: as(gone) })).statusCode, 204);
  h.clock.advanceSeconds(10);

  const good = await jwt({});
  assert.equal((await h.app.inject({ method: 'GET', url: '/v1/me', headers: as(good) })).statusCode, 200, 'the good JWT works');
  const bad: Record<string, string | undefined> = {
    missing: undefined,
    'not bearer': `Basic ${Buffer.from('a:b').toString('base64')}`,
    'empty bearer': 'Bearer ',
    garbage: 'Bearer !!!',
    'bad checksum': `Bearer sk_svc_${'A'.repeat(38)}`,
    'revoked token': `Bearer ${revoked.token}`,
    'expired token': `Bearer ${expiring.token}`,
    'revoked session': `Bearer ${gone}`,
    'unknown session': `Bearer ${'Z'.repeat(32)}`,
    'jwt wrong issuer': `Bearer ${await jwt({ iss: 'https://evil.test' })}`,
    'jwt wrong audience': `Bearer ${await jwt({ aud: 'someone-else' })}`,
    'jwt expired': `Bearer ${await jwt({ exp: Math.floor(Date.now() / 1000) - 60 })}`,
    'jwt wrong key': `Bearer ${await jwt({}, otherKey)}`,
    'jwt alg none': `Bearer ${unsigned(s.owner.userId)}`,
    'jwt unknown subject': `Bearer ${await jwt({ sub: 'usr_00000000000000000000000000' })}`,
    'jwt tampered': `Bearer ${good.slice(0, -4)}${good.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`,
  };

  const paths = dereferenced(h.app.swagger() as unknown as { paths: Record<string, Record<string, { security?: unknown[] }>> }).paths;
  let checked = 0;
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'patch', 'put', 'delete'].includes(method)) continue;
      if (Array.isArray(op.security) && op.security.length === 0) continue; // unauthenticated by design
      // A credential is optional (an empty requirement among the alternatives): none is no failure.
      const optional = Array.isArray(op.security) && op.security.some((r) => Object.keys(r as object).length === 0);
      const url = path.replace(/\{[^}]+\}/g, 'x1');
      for (const [name, authorization] of Object.entries(bad)) {
        if (optional && authorization === undefined) continue;
        const res = await h.app.inject({
          method: method.toUpperCase() as 'GET',
          url,
          headers: { ...(authorization ? { authorization } : {}), 'service-context': s.workspaceId, 'content-type': 'application/json' },
          ...(method === 'get' || method === 'delete' ? {} : { payload: '{}' }),
        });
        assert.equal(res.statusCode, 401, `${name}: ${method.toUpperCase()} ${path} -> ${res.statusCode} ${res.body}`);
        // The challenge names the scheme the document gives the route: Basic where git calls, else Bearer.
        const basic = Array.isArray(op.security) && op.security.some((r) => 'basic' in (r as object));
        assert.equal(res.headers['www-authenticate'], basic ? 'Basic realm="Workspace Platform", charset="UTF-8"' : 'Bearer');
        const body = res.json();
        assert.equal(body.success, false);
        assert.ok(body.errors.length === 0 ? body._tag === 'Unauthorized' : body.errors[0].code === 7010, `${name}: ${res.body}`);
        checked++;
      }
    }
  }
  assert.ok(checked >= Object.keys(bad).length * 5);
});
