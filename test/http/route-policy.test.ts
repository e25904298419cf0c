import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify, { type FastifyContextConfig, type FastifySchema } from 'fastify';
import { Type } from '@sinclair/typebox';
import { checkRouteEvents } from '../../src/http/route-events.js';
import { checkOperationIds } from '../../src/http/operation-ids.js';
import { documentPipelineErrors } from '../../src/http/openapi.js';
import { buildWith } from '../helpers/build-with.js';

/**
 * Issue 49: a route's event, operationId and answers are declared with the route, and start-up
 * refuses a route that lacks one, naming its method and URL (src/http/route-events.ts,
 * src/http/operation-ids.ts, src/http/openapi.ts), as it refuses one without a token scope
 * (test/http/token-scopes.test.ts). Before, hooks filled the event and the operationId in from
 * tables keyed by method and path, and a route missing from them silently had none.
 */
const EXTRA = '/extra/things';
const Person = Type.Object({ id: Type.String() });
const POLICY = { scope: 'workspace', tokenScope: 'secrets:write' } as const;
const made = async () => ({ id: 'p1' });

test('start-up refuses a write route that declares no event, naming its method and URL', async () => {
  await assert.rejects(
    buildWith((app) => app.post(EXTRA, { config: POLICY, schema: { operationId: 'createExtraThing', tags: ['workspaces'], response: { 201: Person } } }, made)),
    (err: Error) => {
      assert.match(err.message, /^POST \/v1\/extra\/things declares no event/);
      assert.match(err.message, /event: null/, 'the message says what to declare');
      return true;
    },
  );
});

test('start-up refuses a route that declares no operationId, naming its method and URL and the name the rule gives it', async () => {
  await assert.rejects(
    buildWith((app) => app.post(EXTRA, { config: { ...POLICY, event: 'member.updated' }, schema: { tags: ['workspaces'], response: { 201: Person } } }, made)),
    (err: Error) => {
      assert.match(err.message, /^POST \/v1\/extra\/things declares no operationId: its schema needs `operationId: 'createExtraThing'`/);
      return true;
    },
  );
});

test('start-up refuses a route that declares no response, naming its method and URL', async () => {
  await assert.rejects(
    buildWith((app) => app.post(EXTRA, { config: { ...POLICY, event: 'member.updated' }, schema: { operationId: 'createExtraThing', tags: ['workspaces'] } }, made)),
    /^Error: POST \/v1\/extra\/things declares no response/,
  );
});

test('the same route declaring all of it starts, and the document shows its event, its name and the statuses of the rule', async () => {
  const built = await buildWith((app) =>
    app.post(EXTRA, { config: { ...POLICY, event: 'member.updated' }, schema: { operationId: 'createExtraThing', tags: ['workspaces'], response: { 201: Person } } }, made),
  );
  try {
    const op = (await built.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json().paths[`/v1${EXTRA}`].post;
    assert.equal(op['x-event-type'], 'member.updated');
    assert.match(op.description, /Records the event `member\.updated`/);
    assert.equal(op.operationId, 'createExtraThing');
    // The pipeline's statuses, by the one rule: an authenticated write of a workspace.
    assert.deepEqual(Object.keys(op.responses).sort(), ['201', '401', '403', '409', '413', '415', '422', '429', '500', '503', '507']);
  } finally {
    await built.close();
  }
});

/** Declares routes on a bare Fastify with the checks: what start-up would do with them. */
function declare(...routes: { method?: 'GET' | 'POST' | 'DELETE'; url?: string; config?: FastifyContextConfig; schema?: FastifySchema }[]) {
  const app = Fastify();
  documentPipelineErrors(app);
  checkRouteEvents(app);
  checkOperationIds(app);
  return () => {
    for (const r of routes) {
      const method = r.method ?? 'POST';
      const response = method === 'GET' ? { 200: Type.Object({ data: Type.Array(Person) }) } : { 201: Person };
      app.route({ method, url: r.url ?? '/v1/things', config: r.config ?? {}, schema: { response, ...r.schema }, handler: made });
    }
  };
}

test('every write declares its event, or null with the reason; a read declares one only when it records one', () => {
  const id = { operationId: 'createThing' };
  const refusals: [FastifyContextConfig, RegExp][] = [
    [{}, /^Error: POST \/v1\/things declares no event/],
    [{ event: null }, /declares `event: null` without `eventWhy`/],
    [{ event: null, eventWhy: ' ' }, /declares `event: null` without `eventWhy`/],
    [{ event: 'secret.created', eventWhy: 'a reason' }, /the reason goes only with `event: null`/],
    [{ event: 'thing.made' as 'secret.created' }, /declares the event thing\.made, which is not one of/],
    [{ event: [] }, /an empty list of events/],
    // An operation of the document records one event, which x-event-type shows.
    [{ event: ['secret.created', 'secret.deleted'] }, /names several events: an operation of the document records one/],
  ];
  for (const [config, message] of refusals) assert.throws(declare({ config, schema: id }), message, JSON.stringify(config));
  assert.throws(declare({ method: 'DELETE', config: {}, schema: { operationId: 'deleteThing' } }), /^Error: DELETE \/v1\/things declares no event/);
  assert.throws(declare({ method: 'GET', config: { event: null, eventWhy: 'it reads' }, schema: { operationId: 'listThings' } }), /a read records nothing unless it names its event/);
  assert.throws(declare({ method: 'GET', config: { eventWhy: 'it reads' }, schema: { operationId: 'listThings' } }), /declares `eventWhy` without `event: null`/);
  for (const config of [{ event: 'secret.created' }, { event: null, eventWhy: 'a preview only reads' }] as FastifyContextConfig[]) {
    assert.doesNotThrow(declare({ config, schema: id }), JSON.stringify(config));
  }
  // A read that records an event names it; one that records none declares nothing.
  assert.doesNotThrow(declare({ method: 'GET', config: { event: 'secret_version.accessed' }, schema: { operationId: 'listThings' } }));
  assert.doesNotThrow(declare({ method: 'GET', schema: { operationId: 'listThings' } }));
  // A page outside the document whose form does several things names each event it may record.
  assert.doesNotThrow(declare({ config: { event: ['session.created', 'device_authorization.approved'] }, schema: { hide: true } }));
});

test("every operation of the document declares its operationId: unique, camelCase, the rule's unless it says why not", () => {
  const write = { event: 'secret.created' } as const;
  assert.throws(declare({ config: write }), /^Error: POST \/v1\/things declares no operationId: its schema needs `operationId: 'createThing'`/);
  assert.throws(declare({ config: write, schema: { operationId: 'Create-thing' } }), /declares the operationId "Create-thing": an operationId is camelCase/);
  assert.throws(
    declare({ config: write, schema: { operationId: 'createThing' } }, { url: '/v1/things/:id(^[^:]+)::copy', config: write, schema: { operationId: 'createThing' } }),
    /POST \/v1\/things\/:id\(\^\[\^:\]\+\)::copy declares the operationId createThing, which POST \/v1\/things declares too/,
  );
  assert.throws(declare({ config: write, schema: { operationId: 'makeThing' } }), /declares the operationId makeThing, not createThing as the rule names it .* say why not in `config.operationIdWhy`/);
  assert.throws(declare({ config: { ...write, operationIdWhy: 'a reason' }, schema: { operationId: 'createThing' } }), /declares `operationIdWhy` for createThing, which is the rule's name/);
  assert.doesNotThrow(declare({ config: { ...write, operationIdWhy: 'things are made, not created' }, schema: { operationId: 'makeThing' } }));
  // The rule: a list is named for its plural, a custom method for its verb.
  assert.doesNotThrow(declare({ method: 'GET', schema: { operationId: 'listThings' } }, { url: '/v1/things/:id(^[^:]+)::copy', config: write, schema: { operationId: 'copyThing' } }));
  // Not in the document: nothing to name.
  assert.doesNotThrow(declare({ config: write, schema: { hide: true } }));
});
