import { EventLog } from '../../src/events/record.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { as, type Seed } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { CursorCodec } from '../../src/shared/cursor.js';
import { createSecretService, type SecretService } from '../../src/secrets/service.js';
import { secretClient } from './secret-client.js';

/** What the compute area uses of secrets (docs/spec-gaps.md, "Compute"): existence in a workspace and the newest enabled payload. */
let other: Seed;
let secrets: SecretService;
let api: ReturnType<typeof secretClient>;
const h = useTestApp({
  setup: async () => {
    other = await h.seed('Other');
    api = secretClient(h, as(s.apiToken));
    secrets = createSecretService({
      db: h.database.db,
      engine: h.database.engine,
      clock: h.clock,
      cursors: new CursorCodec(randomBytes(32)),
      config: h.config,
      log: h.app.log,
      events: new EventLog(h.clock),
    });
  },
});
const s = h.seeded;

test('exists: a secret of the workspace, by canonical or bare id; never another workspace', async () => {
  const secret = await api.createSecret();
  assert.equal(await secrets.exists(s.workspaceId, secret.id), true);
  assert.equal(await secrets.exists(s.workspaceId, secret.id.slice(4)), true);
  assert.equal(await secrets.exists(other.workspaceId, secret.id), false);
  for (const id of ['sec_00000000000000000000000000', '', 'x'.repeat(600), "' or 1=1 --"]) assert.equal(await secrets.exists(s.workspaceId, id), false);
  await api.call('DELETE', `/secrets/${secret.id}`, undefined, { 'if-match': '*' });
  assert.equal(await secrets.exists(s.workspaceId, secret.id), false);
});

test('newestEnabledPayload follows the versions: the highest-numbered enabled one, or null', async () => {
  const secret = await api.createSecret();
  const newest = () => secrets.newestEnabledPayload(s.workspaceId, secret.id).then((b) => b?.toString() ?? null);
  assert.equal(await newest(), null, 'no versions yet');
  const v1 = await api.addVersion(secret.id, Buffer.from('token-1'));
  assert.equal(await newest(), 'token-1');
  const v2 = await api.addVersion(secret.id, Buffer.from('token-2'));
  assert.equal(await newest(), 'token-2');
  const v2d = (await api.transition(secret.id, v2.id, 'disable', v2.etag)).json();
  assert.equal(await newest(), 'token-1');
  await api.transition(secret.id, v1.id, 'destroy', v1.etag);
  assert.equal(await newest(), null, 'nothing enabled');
  await api.transition(secret.id, v2.id, 'enable', v2d.etag);
  assert.equal(await newest(), 'token-2');
  assert.equal((await secrets.newestEnabledPayload(s.workspaceId, secret.id.slice(4)))?.toString(), 'token-2');
  assert.equal(await secrets.newestEnabledPayload(other.workspaceId, secret.id), null, 'never across workspaces');
});
