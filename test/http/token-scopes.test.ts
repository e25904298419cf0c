import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify, { type FastifyContextConfig } from 'fastify';
import { Type } from '@sinclair/typebox';
import { loadConfig } from '../../src/config.js';
import { checkTokenScopes } from '../../src/http/token-scopes.js';
import { createAdminService } from '../../src/admin/service.js';
import { systemClock } from '../../src/shared/clock.js';
import { as, firstError } from '../helpers/harness.js';
import { buildWith } from '../helpers/build-with.js';

/**
 * Issue 48.11: a route's token scope is declared with the route, and start-up refuses a route a
 * workspace API token can reach that declares none (src/http/token-scopes.ts). Before, a hook
 * filled the scope in from a table of tags, and a route whose tag was not in it needed none.
 */
const EXTRA = '/extra/people';
const answer = async () => ({ data: [] });
/** The rest of the route's policy, declared (test/http/route-policy.test.ts holds it). */
const SCHEMA = { operationId: 'listExtraPeople', tags: ['workspaces'], response: { 200: Type.Object({ data: Type.Array(Type.String()) }) } };

test('start-up refuses a workspace route that declares no token scope, naming its method and URL', async () => {
  await assert.rejects(
    buildWith((app) => app.get(EXTRA, { config: { scope: 'workspace' }, schema: SCHEMA }, answer)),
    (err: Error) => {
      assert.match(err.message, /^GET \/v1\/extra\/people declares no token scope/);
      assert.match(err.message, /tokenScope: null/, 'the message says what to declare');
      return true;
    },
  );
});

test('the same route declaring its scope starts, shows it in the document, and a token of no scope is refused it (403 7025)', async () => {
  const built = await buildWith((app) => app.get(EXTRA, { config: { scope: 'workspace', tokenScope: 'members:read' }, schema: SCHEMA }, answer));
  try {
    const doc = (await built.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    assert.equal(doc.paths[`/v1${EXTRA}`].get['x-required-scope'], 'members:read');
    const admin = createAdminService(built.db, systemClock, loadConfig({}).sessions);
    const { workspace_id } = await admin.createWorkspace('Scopes');
    const { user_id } = await admin.createUser({ name: 'owner' });
    await admin.addMember(workspace_id, user_id, 'owner');
    const { session_token } = await admin.createSession(user_id);
    const made = await built.app.inject({ method: 'POST', url: '/v1/api_tokens', headers: as(session_token, workspace_id), payload: { name: 'none', scopes: [] } });
    assert.equal(made.statusCode, 201, made.body);
    const refused = await built.app.inject({ method: 'GET', url: `/v1${EXTRA}`, headers: as(made.json().token) });
    assert.equal(refused.statusCode, 403, refused.body);
    assert.deepEqual(firstError(refused.json()).metadata, { required_scope: 'members:read' });
  } finally {
    await built.close();
  }
});

/** Declares one route on a bare Fastify with the check: what start-up would do with it. */
function declare(config: FastifyContextConfig, method: 'GET' | 'POST' = 'GET') {
  const app = Fastify();
  checkTokenScopes(app);
  return () => app.route({ method, url: '/v1/thing', config, schema: {}, handler: answer });
}

test('every route a token can reach declares its scope: `any` and `auth: optional` routes too; a null needs its reason, which way and why', () => {
  const refusals: [FastifyContextConfig, RegExp][] = [
    [{ scope: 'any' }, /Error: GET \/v1\/thing declares no token scope/],
    [{ auth: 'optional' }, /Error: GET \/v1\/thing declares no token scope/],
    [{}, /Error: GET \/v1\/thing declares no token scope/],
    [{ scope: 'workspace', tokenScope: null }, /without `tokenScopeWhy/],
    [{ scope: 'workspace', tokenScope: null, tokenScopeWhy: { tokens: 'open', why: ' ' } }, /without `tokenScopeWhy/],
    [{ scope: 'workspace', tokenScope: null, tokenScopeWhy: { tokens: 'maybe' as 'open', why: 'a reason' } }, /without `tokenScopeWhy/],
    [{ scope: 'workspace', tokenScope: 'root:all' as 'members:read' }, /declares the token scope root:all, which is not one of dashboards:read/],
    [{ scope: 'workspace', tokenScope: 'secrets:read', tokenScopeWhy: { tokens: 'open', why: 'a reason' } }, /the reason goes only with `tokenScope: null`/],
    // A route for roles without a scope is refused to every token: "open" would be a false promise.
    [{ scope: 'workspace', roles: ['owner'], tokenScope: null, tokenScopeWhy: { tokens: 'open', why: 'a reason' } }, /needs a role, which no API token has/],
  ];
  for (const [config, message] of refusals) assert.throws(declare(config), message, JSON.stringify(config));
  assert.throws(declare({ scope: 'workspace' }, 'POST'), /^Error: POST \/v1\/thing declares no token scope/);
  // Tokens cannot reach these at all: nothing to declare.
  for (const config of [{ scope: 'user' }, { auth: 'none' }] as FastifyContextConfig[]) assert.doesNotThrow(declare(config), JSON.stringify(config));
  for (const config of [
    { scope: 'workspace', tokenScope: 'secrets:access' },
    { scope: 'workspace', roles: ['admin'], tokenScope: null, tokenScopeWhy: { tokens: 'refused', why: 'an admin does it' } },
    // A guarded action a token takes within its scope, never by a role (docs/spec-gaps.md, "Roles (issue 50)").
    { scope: 'workspace', roles: ['owner', 'admin'], tokenScope: 'secrets:write' },
    { scope: 'any', tokenScope: null, tokenScopeWhy: { tokens: 'open', why: 'it names only the caller' } },
  ] as FastifyContextConfig[]) {
    assert.doesNotThrow(declare(config), JSON.stringify(config));
  }
});
