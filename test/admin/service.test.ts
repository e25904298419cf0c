import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useTestApp } from '../helpers/test-app.js';
import { AdminError } from '../../src/admin/service.js';
import { failAtCommit } from '../installs/fixture.js';

/** The operator commands' rules, in process (test/cli/admin.test.ts runs them as commands). */
const h = useTestApp({ seed: false });

const counts = async () => {
  const db = h.database.db;
  const n = async (table: 'workspaces' | 'users' | 'memberships' | 'sessions' | 'api_tokens') =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    workspaces: await n('workspaces'),
    users: await n('users'),
    memberships: await n('memberships'),
    sessions: await n('sessions'),
    api_tokens: await n('api_tokens'),
  };
};

test('bootstrap is one transaction: a failure at its last step leaves no workspace, user, membership, session or token', async () => {
  await h.admin.bootstrap();
  const before = await counts();
  // Every statement of the next bootstrap succeeds, the API token (made last) included; its
  // COMMIT fails. (Not a renamed table: a migration elsewhere could meet the missing name.)
  const probe = await failAtCommit(h.database, 'api_tokens', `new.name = 'bootstrap'`);
  try {
    await assert.rejects(h.admin.bootstrap({ force: true }), /foreign key/i, 'refused by the probe, at COMMIT');
  } finally {
    await probe.remove();
  }
  assert.deepEqual(await counts(), before);
  // And it works again once the probe is gone.
  const out = await h.admin.bootstrap({ force: true });
  assert.match(out.api_token, /^sk_svc_/);
  assert.equal((await counts()).workspaces, before.workspaces + 1);
  assert.equal((await counts()).api_tokens, before.api_tokens + 1);
});

test('user link: a subject is 1-255 characters, as the authenticator accepts; longer is refused and nothing is linked', async () => {
  const { user_id } = await h.admin.createUser({ name: 'Linked' });
  const long = 's'.repeat(256);
  await assert.rejects(h.admin.linkSubject(user_id, long), (err: Error) => err instanceof AdminError && /256 characters; a JWT subject is at most 255/.test(err.message));
  await assert.rejects(h.admin.linkSubject(user_id, ''), /must not be empty/);
  assert.equal(await h.database.db.selectFrom('external_identities').select('subject').where('user_id', '=', user_id).executeTakeFirst(), undefined);
  const exact = 's'.repeat(255);
  assert.deepEqual(await h.admin.linkSubject(user_id, exact), { user_id, subject: exact });
});
