import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as client from 'openid-client';
import { useTestApp } from '../helpers/test-app.js';
import { publicAddress, type PublicAddress } from '../helpers/public-address.js';
import { decide } from './device-helpers.js';

/**
 * The whole flow driven by openid-client, an RFC 8628 client written by others, against a
 * listening server: discovery from the issuer, initiation, approval, polling, then the access
 * token used as a session.
 */
let issuer: string;
/** The issuer's address (WSP_PUBLIC_URL), known before the app is built, forwarded to where it listens (port 0). */
let front: PublicAddress;

const h = useTestApp(async () => {
  front = await publicAddress();
  issuer = front.url;
  return {
    config: { publicUrl: issuer },
    setup: async () => {
      front.forwardTo(await h.app.listen({ port: 0, host: '127.0.0.1' }));
    },
    teardown: async () => {
      await front?.close();
    },
  };
});
const s = h.seeded;

async function discover(clientId = 'wsp-cli') {
  return client.discovery(new URL(issuer), clientId, undefined, client.None(), { algorithm: 'oauth2', execute: [client.allowInsecureRequests] });
}

test('openid-client: discover, initiate, poll (authorization_pending), approve, poll again; the access token is a session', async () => {
  const config = await discover();
  assert.equal(config.serverMetadata().issuer, issuer);
  const started = await client.initiateDeviceAuthorization(config, {});
  assert.match(started.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
  assert.equal(started.verification_uri, `${issuer}/device`);
  assert.equal(started.interval, 5);

  // The client waits in real time and the server's clock is the test's: the client is told a
  // 1 s interval, and the server's clock moves the real 5 s before each poll. The first poll
  // meets authorization_pending; only then does someone approve.
  const answers: string[] = [];
  config[client.customFetch] = async (url, options) => {
    h.clock.advanceSeconds(started.interval!);
    const res = await fetch(url, options as RequestInit);
    if (new URL(url).pathname === '/v1/oauth/token') {
      const body = (await res.clone().json()) as { error?: string };
      answers.push(body.error ?? 'token');
      if (body.error === 'authorization_pending') {
        const approved = await decide(h, 'approve', s.admin.session, started.user_code.toLowerCase());
        assert.equal(approved.statusCode, 200, approved.body);
      }
    }
    return res;
  };
  const tokens = await client.pollDeviceAuthorizationGrant(config, { ...started, interval: 1 });
  assert.deepEqual(answers, ['authorization_pending', 'token'], 'openid-client kept polling after authorization_pending');
  assert.equal(tokens.token_type, 'bearer');
  const me = await fetch(`${issuer}/v1/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
  assert.equal(me.status, 200);
  const body = (await me.json()) as { credential: { kind: string }; user: { id: string } };
  assert.equal(body.credential.kind, 'session');
  assert.equal(body.user.id, s.admin.userId);
});

test('openid-client: a denied login rejects with access_denied', async () => {
  const config = await discover();
  const started = await client.initiateDeviceAuthorization(config, {});
  assert.equal((await decide(h, 'deny', s.member.session, started.user_code)).statusCode, 200);
  h.clock.advanceSeconds(started.interval!);
  await assert.rejects(client.pollDeviceAuthorizationGrant(config, started), (err: Error & { error?: string; status?: number }) => {
    assert.equal(err.error, 'access_denied');
    assert.equal(err.status, 400);
    return true;
  });
});

test('openid-client: an unknown client id is refused with invalid_client', async () => {
  const config = await discover('not-registered');
  await assert.rejects(client.initiateDeviceAuthorization(config, {}), (err: Error & { error?: string }) => err.error === 'invalid_client');
});
