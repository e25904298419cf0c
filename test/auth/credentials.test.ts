import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import zlib from 'node:zlib';
import { as, firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { dumpAllRows } from '../helpers/db.js';
import { apiTokenChecksum, hasValidChecksum } from '../../src/auth/credentials.js';
import { crc32 } from 'node:zlib';
import { base62 } from '../../src/shared/crypto.js';

/** docs/spec-gaps.md, "Credentials and tokens": what a bearer credential must look like, and how API tokens are made and kept. */
const h = useTestApp();
const s = h.seeded;

const get = (authorization: string | undefined, url = '/v1/me') => h.app.inject({ method: 'GET', url, headers: authorization === undefined ? {} : { authorization } });

function assert401(res: { statusCode: number; headers: Record<string, unknown>; json(): unknown; body: string }, why: string) {
  assert.equal(res.statusCode, 401, `${why}: ${res.statusCode} ${res.body}`);
  assert.equal(res.headers['www-authenticate'], 'Bearer', why);
  assert.equal(firstError(res.json()).code, 7010, why);
  assert.deepEqual((res.json() as { result: unknown }).result, {}, why);
}

/** An independent CRC-32 (bit by bit, no table) and base62, to check the server's against. */
function crc32Reference(text: string): number {
  let crc = 0xffffffff;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
function base62Reference(n: number): string {
  let out = '';
  for (let i = 0; i < 6; i++) {
    out = ALPHABET[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

describe('malformed and unknown credentials: 401 7010 with WWW-Authenticate: Bearer', () => {
  test('missing, garbage, Bearer without a value, Basic, other schemes', async () => {
    const cases: Record<string, string | undefined> = {
      missing: undefined,
      empty: '',
      garbage: 'garbage',
      'Bearer alone': 'Bearer',
      'Bearer and a space': 'Bearer ',
      'Bearer and spaces': 'Bearer    ',
      Basic: `Basic ${Buffer.from('user:pass').toString('base64')}`,
      'Basic with a session token': `Basic ${s.owner.session}`,
      Token: `Token ${s.apiToken}`,
      'two credentials': `Bearer ${s.apiToken} ${s.apiToken}`,
      'non-ASCII': 'Bearer t\u00e9st',
      'long junk': `Bearer ${'x'.repeat(9000)}`,
      'session token one short': `Bearer ${s.owner.session.slice(1)}`,
      'session token one long': `Bearer ${s.owner.session}x`,
      'unknown session of the right shape': `Bearer ${'Q'.repeat(32)}`,
      'sk_svc_ only': 'Bearer sk_svc_',
      'API token one short': `Bearer ${s.apiToken.slice(0, -1)}`,
      'API token with a symbol': `Bearer ${s.apiToken.slice(0, 10)}-${s.apiToken.slice(11)}`,
    };
    for (const [why, authorization] of Object.entries(cases)) assert401(await get(authorization), why);
  });

  test('the scheme is case-insensitive; the credential is not', async () => {
    assert.equal((await get(`bearer ${s.apiToken}`)).statusCode, 200);
    assert.equal((await get(`BEARER ${s.owner.session}`)).statusCode, 200);
    // One letter in the other case (a session token of 32 base62 characters has letters).
    const flipped = s.owner.session.replace(/[A-Za-z]/, (c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()));
    assert.notEqual(flipped, s.owner.session);
    assert401(await get(`Bearer ${flipped}`), 'session token in other case');
  });

  test('an API token with a wrong checksum is 401, and so is a well-formed unknown one', async () => {
    const last = s.apiToken.at(-1)!;
    const wrongChecksum = s.apiToken.slice(0, -1) + (last === '0' ? '1' : '0');
    assert.equal(hasValidChecksum(wrongChecksum), false);
    assert401(await get(`Bearer ${wrongChecksum}`), 'wrong checksum');
    // Change one character of the random part: the checksum no longer matches either.
    const body = s.apiToken.slice(7, 39);
    const changed = `sk_svc_${body[0] === 'a' ? 'b' : 'a'}${body.slice(1)}${s.apiToken.slice(39)}`;
    assert401(await get(`Bearer ${changed}`), 'body changed');
    // Right shape, right checksum, but never issued.
    const head = `sk_svc_${'A'.repeat(32)}`;
    const unknown = head + apiTokenChecksum(head);
    assert.ok(hasValidChecksum(unknown));
    assert401(await get(`Bearer ${unknown}`), 'unknown token');
  });
});

describe('workspace API token format (docs/spec-gaps.md, "Credentials and tokens")', () => {
  test('CRC-32 (IEEE) is the standard one: crc32("123456789") = 0xCBF43926; base62 is 0-9A-Za-z, MSB first, 0-padded', () => {
    assert.equal(crc32('123456789'), 0xcbf43926);
    assert.equal(crc32Reference('123456789'), 0xcbf43926);
    assert.equal(crc32(''), 0);
    assert.equal(base62(0xcbf43926, 6), '3jZRME');
    assert.equal(base62Reference(0xcbf43926), '3jZRME');
    assert.equal(base62(61, 6), '00000z');
    assert.equal(base62(62, 6), '000010');
    assert.equal(base62(0xffffffff, 6), base62Reference(0xffffffff));
    assert.equal(apiTokenChecksum(`sk_svc_${'0'.repeat(32)}`), base62Reference(crc32Reference(`sk_svc_${'0'.repeat(32)}`)));
  });

  test('a literal vector: the checksum of sk_svc_ + 32 zeros is 1fuxv8 (CRC-32 0x5b867872, checked apart from this code)', () => {
    const head = `sk_svc_${'0'.repeat(32)}`;
    // The literal is computed apart from this code, on every Node: by the bit-by-bit reference
    // (itself held to the published check value of CRC-32/ISO-HDLC), by zlib.crc32 where Node has
    // it (20.15 and later; older ones must lack it, not merely skip it), and the digits by hand.
    assert.equal(crc32Reference('123456789'), 0xcbf43926);
    assert.equal(crc32Reference(head), 0x5b867872);
    const zlibCrc32 = (zlib as { crc32?: (data: string) => number }).crc32;
    const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
    if (major > 20 || (major === 20 && minor >= 15)) assert.equal(typeof zlibCrc32, 'function', `Node ${process.versions.node} has zlib.crc32`);
    if (zlibCrc32) assert.equal(zlibCrc32(head), 0x5b867872);
    assert.equal(crc32(head), 0x5b867872);
    assert.equal(apiTokenChecksum(head), '1fuxv8');
    assert.ok(hasValidChecksum(`${head}1fuxv8`));
    assert.ok(!hasValidChecksum(`${head}1fuxv9`));
  });

  test('issued tokens: sk_svc_ + 32 base62 + 6 base62 of the CRC-32 of everything before', async () => {
    const tokens = [s.apiToken];
    for (let i = 0; i < 20; i++) {
      const res = await h.app.inject({ method: 'POST', url: '/v1/api_tokens', headers: as(s.owner.session, s.workspaceId), payload: { name: `fmt${i}` } });
      assert.equal(res.statusCode, 201);
      tokens.push(res.json().token);
    }
    for (const t of tokens) {
      assert.match(t, /^sk_svc_[0-9A-Za-z]{32}[0-9A-Za-z]{6}$/);
      assert.equal(t.length, 45);
      assert.equal(t.slice(39), base62Reference(crc32Reference(t.slice(0, 39))), t);
    }
    assert.equal(new Set(tokens).size, tokens.length);
  });

  test('tokens and sessions are stored only as SHA-256: no plaintext anywhere in the database', async () => {
    const created = await h.app.inject({
      method: 'POST',
      url: '/v1/api_tokens',
      headers: as(s.owner.session, s.workspaceId, { 'idempotency-key': 'scan-1' }),
      payload: { name: 'scan' },
    });
    assert.equal(created.statusCode, 201);
    const token: string = created.json().token;
    const { session_token } = await h.admin.createSession(s.member.userId);
    // Use both so that every last-use write has happened too.
    assert.equal((await get(`Bearer ${token}`)).statusCode, 200);
    assert.equal((await get(`Bearer ${session_token}`)).statusCode, 200);

    const dump = await dumpAllRows(h.database);
    for (const plain of [token, session_token, s.apiToken, s.owner.session, s.admin.session, s.member.session]) {
      assert.ok(!dump.includes(plain), 'a plaintext credential is in the database');
      // Not even the secret part without its prefix.
      assert.ok(!dump.includes(plain.replace(/^sk_svc_/, '').slice(0, 32)), 'the secret part of a credential is in the database');
      assert.ok(dump.includes(createHash('sha256').update(plain).digest('hex')), 'its SHA-256 is');
    }
  });
});

describe('last_used_at of an API token', () => {
  test('null until used, set on use, written at most once a minute', async () => {
    const res = await h.app.inject({ method: 'POST', url: '/v1/api_tokens', headers: as(s.owner.session, s.workspaceId), payload: { name: 'usage' } });
    const { id, token } = res.json();
    const row = () => h.database.db.selectFrom('api_tokens').select(['last_used_at']).where('id', '=', id).executeTakeFirstOrThrow();
    const listed = async () => {
      const list = await h.app.inject({ method: 'GET', url: '/v1/api_tokens?limit=100', headers: as(s.owner.session, s.workspaceId) });
      return list.json().data.find((t: { id: string }) => t.id === id).last_used_at;
    };
    assert.equal((await row()).last_used_at, null);
    assert.equal(await listed(), null);

    const t0 = Math.floor(h.clock.nowMs() / 1000);
    assert.equal((await get(`Bearer ${token}`)).statusCode, 200);
    assert.equal(Number((await row()).last_used_at), t0);
    assert.equal(await listed(), t0);

    h.clock.advanceSeconds(59);
    assert.equal((await get(`Bearer ${token}`)).statusCode, 200);
    assert.equal(Number((await row()).last_used_at), t0, 'no write within the minute');

    h.clock.advanceSeconds(1);
    assert.equal((await get(`Bearer ${token}`)).statusCode, 200);
    assert.equal(Number((await row()).last_used_at), t0 + 60, 'written again after a minute');
  });

  test('a failed request still counts as use once authenticated; a bad token changes nothing', async () => {
    const res = await h.app.inject({ method: 'POST', url: '/v1/api_tokens', headers: as(s.owner.session, s.workspaceId), payload: { name: 'usage2' } });
    const { id, token } = res.json();
    h.clock.advanceSeconds(120);
    const forbidden = await h.app.inject({ method: 'POST', url: '/v1/api_tokens', headers: as(token), payload: { name: 'nope' } });
    assert.equal(forbidden.statusCode, 403);
    const r = await h.database.db.selectFrom('api_tokens').select(['last_used_at']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(Number(r.last_used_at), Math.floor(h.clock.nowMs() / 1000));
  });
});
