import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, generateKeyPair, exportJWK, exportSPKI, type CryptoKey } from 'jose';
import { createTestApp, as, firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';

/** docs/spec-gaps.md, "Credentials and tokens": WSP_JWT_JWKS_URL, served here by a local HTTP server on 127.0.0.1. */
const ISS = 'https://idp.jwks.test';
const AUD = 'wsp-api';

let server: http.Server;
let fetches = 0;
let ec: { publicKey: CryptoKey; privateKey: CryptoKey };
let rsa: { publicKey: CryptoKey; privateKey: CryptoKey };
let stranger: { publicKey: CryptoKey; privateKey: CryptoKey };

const h = useTestApp(async () => {
  ec = await generateKeyPair('ES256', { extractable: true });
  rsa = await generateKeyPair('RS256', { extractable: true });
  stranger = await generateKeyPair('ES256', { extractable: true });
  const keys = [
    { ...(await exportJWK(ec.publicKey)), kid: 'ec-1', use: 'sig' },
    { ...(await exportJWK(rsa.publicKey)), kid: 'rsa-1', use: 'sig' },
  ];
  server = http.createServer((req, res) => {
    fetches++;
    if (req.url !== '/.well-known/jwks.json') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    config: { jwt: { jwksUrl: `http://127.0.0.1:${port}/.well-known/jwks.json`, publicKey: undefined, issuer: ISS, audience: AUD } },
  };
});
const s = h.seeded;
after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function token(key: CryptoKey | Uint8Array, alg: string, kid: string | undefined, sub = s.owner.userId) {
  const now = Math.floor(h.clock.nowMs() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg, ...(kid ? { kid } : {}) })
    .setIssuer(ISS)
    .setAudience(AUD)
    .setSubject(sub)
    .setIssuedAt(now)
    .setExpirationTime(now + 300)
    .sign(key);
}

async function me(t: string) {
  const res = await h.app.inject({ method: 'GET', url: '/v1/me', headers: as(t, s.workspaceId) });
  if (res.statusCode === 401) assert.equal(firstError(res.json()).code, 7010);
  return res;
}

test('an ES256 and an RS256 token whose kid is in the JWKS are accepted', async () => {
  const a = await me(await token(ec.privateKey, 'ES256', 'ec-1'));
  assert.equal(a.statusCode, 200, a.body);
  assert.equal(a.json().credential.kind, 'jwt');
  assert.equal(a.json().role, 'owner');
  assert.equal((await me(await token(rsa.privateKey, 'RS256', 'rsa-1', s.member.userId))).json().role, 'member');
  assert.ok(fetches >= 1, 'the JWKS was fetched from the URL');
});

test('401: a key not in the JWKS, an unknown kid, a kid naming the other key, alg none, HS256', async () => {
  assert.equal((await me(await token(stranger.privateKey, 'ES256', 'ec-1'))).statusCode, 401, 'signed by a stranger under a known kid');
  assert.equal((await me(await token(stranger.privateKey, 'ES256', 'ec-9'))).statusCode, 401, 'unknown kid');
  assert.equal((await me(await token(ec.privateKey, 'ES256', 'rsa-1'))).statusCode, 401, 'EC signature, RSA kid');
  const secret = new TextEncoder().encode(await exportSPKI(ec.publicKey));
  assert.equal((await me(await token(secret, 'HS256', 'ec-1'))).statusCode, 401, 'HS256 with the public key as the secret');
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(h.clock.nowMs() / 1000);
  const none = `${enc({ alg: 'none', kid: 'ec-1' })}.${enc({ iss: ISS, aud: AUD, sub: s.owner.userId, exp: now + 60 })}.`;
  assert.equal((await me(none)).statusCode, 401, 'alg none');
});

test('when the JWKS cannot be fetched, JWTs are 401, never 500', async () => {
  const broken = await createTestApp({ config: { jwt: { jwksUrl: 'http://127.0.0.1:9/jwks.json', publicKey: undefined, issuer: ISS, audience: AUD } } });
  try {
    const bs = await broken.seed();
    const now = Math.floor(broken.clock.nowMs() / 1000);
    const t = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: 'ec-1' })
      .setIssuer(ISS)
      .setAudience(AUD)
      .setSubject(bs.owner.userId)
      .setExpirationTime(now + 60)
      .sign(ec.privateKey);
    const res = await broken.app.inject({ method: 'GET', url: '/v1/me', headers: as(t) });
    assert.equal(res.statusCode, 401);
  } finally {
    await broken.close();
  }
});
