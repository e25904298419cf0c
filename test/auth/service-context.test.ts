import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT, generateKeyPair, exportSPKI, type CryptoKey } from 'jose';
import { as, firstError, type Seed } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';

/**
 * The spec's four Authentication rules on Service-Context, for each kind of credential:
 * 1. a workspace API token acts on its workspace without the header;
 * 2. a broad credential (session, JWT) selects the workspace with it;
 * 3. a broad credential without it on a workspace-scoped endpoint: 403;
 * 4. a header naming another workspace than the token's: 403; a matching one is accepted.
 * Plus the header's own rule: `ws_<id>`, 1-53 characters, else 422.
 */
const ISS = 'https://idp.sc.test';
const AUD = 'wsp';
let key: CryptoKey;
let other: Seed;

const h = useTestApp(async () => {
  const pair = await generateKeyPair('ES256', { extractable: true });
  key = pair.privateKey;
  return {
    config: { jwt: { publicKey: await exportSPKI(pair.publicKey), issuer: ISS, audience: AUD, jwksUrl: undefined } },
    seed: 'Home',
    setup: async () => {
      other = await h.seed('Other');
    },
  };
});
const s = h.seeded;

async function jwtFor(userId: string) {
  const now = Math.floor(h.clock.nowMs() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'ES256' })
    .setIssuer(ISS)
    .setAudience(AUD)
    .setSubject(userId)
    .setIssuedAt(now)
    .setExpirationTime(now + 600)
    .sign(key);
}

const WORKSPACE_ROUTE = '/v1/api_tokens';
const call = (credential: string, serviceContext?: string, url = WORKSPACE_ROUTE) =>
  h.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${credential}`, ...(serviceContext !== undefined ? { 'service-context': serviceContext } : {}) } });

function expectError(res: { statusCode: number; json(): unknown; body: string }, status: number, code: number, path?: string[]) {
  assert.equal(res.statusCode, status, res.body);
  const e = firstError(res.json());
  assert.equal(e.code, code);
  if (path) assert.deepEqual(e.path, path);
}

const OVERLONG = `ws_${'a'.repeat(51)}`; // 54 characters
const LONGEST = `ws_${'a'.repeat(50)}`; // 53 characters
const MALFORMED = ['', ' ', 'ws_', 'ws-abc', 'wx_01hxyz', 'WS_01hxyz', 'tok_01hxyz', '01hxyz', 'ws_abc def', 'ws_abc,ws_def', 'ws_ä', OVERLONG];

describe('broad credentials: session token and JWT', () => {
  for (const kind of ['session', 'jwt'] as const) {
    const cred = async () => (kind === 'session' ? s.owner.session : await jwtFor(s.owner.userId));

    test(`${kind}: without Service-Context on a workspace-scoped endpoint, 403 (7021)`, async () => {
      expectError(await call(await cred()), 403, 7021);
    });

    test(`${kind}: with the id of a workspace of the user, accepted (the bare id is not a wire id: 422)`, async () => {
      const res = await call(await cred(), s.workspaceId);
      assert.equal(res.statusCode, 200, res.body);
      const me = await call(await cred(), s.workspaceId, '/v1/me');
      assert.equal(me.json().workspace.id, s.workspaceId);
      assert.equal(me.json().role, 'owner');
      expectError(await call(await cred(), s.workspaceId.slice(3)), 422, 7003, ['headers', 'service-context']);
    });

    test(`${kind}: a workspace the user is not a member of, or that does not exist, 403 (7022)`, async () => {
      expectError(await call(await cred(), other.workspaceId), 403, 7022);
      expectError(await call(await cred(), 'ws_00000000000000000000000000'), 403, 7022);
      expectError(await call(await cred(), LONGEST), 403, 7022, undefined);
    });

    test(`${kind}: 53 characters is well-formed (403, not a member), 54 is 422; malformed values 422 on ["headers","service-context"]`, async () => {
      assert.equal(LONGEST.length, 53);
      assert.equal(OVERLONG.length, 54);
      expectError(await call(await cred(), LONGEST), 403, 7022);
      for (const bad of MALFORMED) {
        expectError(await call(await cred(), bad), 422, 7003, ['headers', 'service-context']);
      }
    });

    test(`${kind}: user-scoped and either-scoped endpoints need no Service-Context, but one sent must be well-formed`, async () => {
      const me = await call(await cred(), undefined, '/v1/me');
      assert.equal(me.statusCode, 200);
      assert.equal(me.json().workspace, null);
      expectError(await call(await cred(), OVERLONG, '/v1/me'), 422, 7003, ['headers', 'service-context']);
      expectError(await call(await cred(), other.workspaceId, '/v1/me'), 403, 7022);
      const notes = await call(await cred(), 'nope', '/v1/notifications');
      expectError(notes, 422, 7003, ['headers', 'service-context']);
    });
  }
});

describe('workspace API token', () => {
  test('acts on its own workspace without the header', async () => {
    const res = await call(s.apiToken);
    assert.equal(res.statusCode, 200);
    assert.ok(res.json().data.some((t: { id: string }) => t.id === s.apiTokenId));
    const me = await call(s.apiToken, undefined, '/v1/me');
    assert.equal(me.json().workspace.id, s.workspaceId);
    assert.equal(me.json().role, null);
  });

  test("with its own workspace's id: accepted; with another's, or a non-existent one: 403 (7022)", async () => {
    assert.equal((await call(s.apiToken, s.workspaceId)).statusCode, 200);
    expectError(await call(s.apiToken, other.workspaceId), 403, 7022);
    expectError(await call(other.apiToken, s.workspaceId), 403, 7022);
    expectError(await call(s.apiToken, LONGEST), 403, 7022);
  });

  test('a malformed header is 422 for it too (checked before the workspace)', async () => {
    for (const bad of MALFORMED) expectError(await call(s.apiToken, bad), 422, 7003, ['headers', 'service-context']);
  });

  test('user-scoped endpoints are 403 for a workspace API token (it has no user)', async () => {
    expectError(await call(s.apiToken, undefined, '/v1/notifications'), 403, 7024);
    expectError(await call(s.apiToken, s.workspaceId, '/v1/notifications'), 403, 7024);
  });
});

test('order of checks: a bad credential is 401 whatever the header; a bad header is 422 before any 403', async () => {
  const res = await call('nonsense', OVERLONG);
  assert.equal(res.statusCode, 401);
  // A member (no role to create tokens) with a malformed header: 422, not 403.
  const post = await h.app.inject({
    method: 'POST',
    url: '/v1/api_tokens',
    headers: as(s.member.session, OVERLONG),
    payload: { name: 'x' },
  });
  expectError(post, 422, 7003, ['headers', 'service-context']);
});
