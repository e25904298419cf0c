import { test } from 'node:test';
import assert from 'node:assert/strict';
import { differences, listingAt } from './upgrade-data.js';

/**
 * The upgrade test reads a fixture committed once, for months: what the clock ends on its own
 * (the suspension a day after the fixture, the invitation seven days after) is expected gone
 * once due, listed before, and either near the end; nothing else may drop out of a list.
 */
const madeAt = '2026-11-26T09:49:26.467Z';
const at = (hours: number) => Date.parse(madeAt) + hours * 3600_000;

test('a list member ends with time only on the lists whose members do, and only once due', () => {
  const suspensions = '/v1/compute/suspensions';
  const invitations = '/v1/workspaces/ws_1/invitations';
  assert.deepEqual(
    [0, 22.9, 23.5, 24.5, 25.1, 24 * 400].map((h) => listingAt(suspensions, madeAt, at(h))),
    ['listed', 'listed', 'either', 'either', 'ended', 'ended'],
  );
  assert.deepEqual(
    [24.5, 6 * 24, 7 * 24, 7 * 24 + 1.1].map((h) => listingAt(invitations, madeAt, at(h))),
    ['listed', 'listed', 'either', 'ended'],
  );
  for (const list of ['/v1/api_tokens', '/v1/webhooks', '/v1/workspaces/ws_1/members', '/v1/compute/suspensions/x']) assert.equal(listingAt(list, madeAt, at(24 * 400)), 'listed', list);
});

test("the fields the clock moves are not differences on the paths it moves them; the fixture's own fields still are", () => {
  const machine = { id: 'mch_1', hostname: 'upgrade-suspended', suspension_id: 'susp_1' };
  assert.deepEqual(differences('/v1/machines/mch_1', machine, { ...machine, suspension_id: null }), []);
  assert.deepEqual(differences('/v1/machines/mch_1', machine, { ...machine, hostname: 'renamed' }), ['/hostname: "upgrade-suspended" -> "renamed"']);
  const hook = { id: 'wh_1', url: 'http://127.0.0.1:9/upgrade-hook', disabled_reason: null };
  assert.deepEqual(differences('/v1/webhooks/wh_1', hook, { ...hook, disabled_reason: 'disabled after 24 hours of failed deliveries' }), []);
  // Off the moving paths a volatile name is compared like any other.
  assert.deepEqual(differences('/v1/secrets/sec_1', { state: 'enabled' }, { state: 'disabled' }), ['/state: "enabled" -> "disabled"']);
});
