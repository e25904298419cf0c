import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useTestApp } from '../helpers/test-app.js';
import { hiddenClassChanges, sameHiddenClass } from '../helpers/hidden-class.js';
import { classifyCredential } from '../../src/auth/credentials.js';
import { credentialLookups } from '../../src/service-deps.js';
import { nowSeconds } from '../../src/shared/clock.js';
import { TOKEN_LIST_PREFIX } from '../../src/tokens/store.js';
import { NOTIFICATION_LIST_PREFIX } from '../../src/notifications/store.js';

/**
 * What every authenticated request makes keeps one hidden class. On Node 20 an object literal
 * that spreads one object and adds a property (`{ ...found, listRead }`) gets a new class on
 * every call, allocated in the old generation: under the api_tokens read that was a new class
 * per request, old-generation growth and a mark-compact every two seconds (docs/benchmarks.md,
 * round twelve).
 */
const h = useTestApp();
const s = h.seeded;

const hashOf = (credential: string) => {
  const shape = classifyCredential(credential);
  assert.ok(shape.kind === 'api_token' || shape.kind === 'session', shape.kind);
  return shape.hash;
};

test('the probe itself tells a spread-and-add literal from a plain one', async (t) => {
  // Without this, a V8 that no longer makes a class per spread would leave the tests below unable
  // to fail. Node 20 (the machines', CI's) has the problem; a later V8 caches the class, and
  // there the tests below hold the lookups to one class all the same.
  const found = (i: number) => ({ tokenId: `tok_${i}`, workspaceId: `ws_${i}` });
  let i = 0;
  const spreadChanges = await hiddenClassChanges(() => ({ ...found(i++), listRead: null }));
  if (process.versions.node.startsWith('20.')) assert.ok(spreadChanges > 0, 'spread and add: a class per call on Node 20');
  else t.diagnostic(`spread and add on Node ${process.versions.node}: ${spreadChanges} class changes in 16 calls`);
  assert.equal(await hiddenClassChanges(() => ({ tokenId: `tok_${i}`, workspaceId: `ws_${i++}`, listRead: null })), 0);
  assert.ok(sameHiddenClass({ a: 1 }, { a: 2 }));
});

test("an API token's lookup answers with one hidden class, with its list's version and without", async () => {
  const lookups = credentialLookups(h.database.db, h.config.sessions);
  const hash = hashOf(s.apiToken);
  const now = nowSeconds(h.clock);
  await lookups.apiToken(hash, now); // its first use is written: the list is read alongside from the next one on
  const withList = await lookups.apiToken(hash, now, TOKEN_LIST_PREFIX);
  assert.ok(withList?.listRead, 'the list read alongside');
  assert.equal(await hiddenClassChanges(async () => (await lookups.apiToken(hash, now, TOKEN_LIST_PREFIX))!), 0);
  assert.equal(await hiddenClassChanges(async () => (await lookups.apiToken(hash, now))!), 0);
  assert.ok(sameHiddenClass(withList, (await lookups.apiToken(hash, now))!), 'with and without the list: one class');
});

test("a session's lookup answers with one hidden class, with its list's version and without", async () => {
  const lookups = credentialLookups(h.database.db, h.config.sessions);
  const hash = hashOf(s.member.session);
  const now = nowSeconds(h.clock);
  const withList = await lookups.session(hash, now, NOTIFICATION_LIST_PREFIX);
  assert.ok(withList?.listRead, 'the list read alongside');
  assert.equal(await hiddenClassChanges(async () => (await lookups.session(hash, now, NOTIFICATION_LIST_PREFIX))!), 0);
  assert.equal(await hiddenClassChanges(async () => (await lookups.session(hash, now))!), 0);
  assert.ok(sameHiddenClass(withList, (await lookups.session(hash, now))!), 'with and without the list: one class');
});
