import type { FastifyInstance } from 'fastify';
import { EVENT_TYPES } from '../events/event-type-schemas.js';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Holds every write route to the event it declares it records on success (docs/spec-gaps.md, "Events and the audit log"):
 * `config.event`, or `event: null` with `eventWhy` (a preview and git's upload-pack only read; a
 * device authorization is a client's, before anyone is signed in). A read declares one only when
 * it records one (a secret's `:access`). A write that declares nothing stops start-up, so no write
 * goes unrecorded by omission; nothing is filled in here. A write that turns out to change nothing
 * (a PATCH equal to the current state, a notification already read) records nothing.
 *
 * The document shows each event (`x-event-type`, and a line of the description), and
 * test/events/every-write.test.ts holds every write operation to it: one event of this type on
 * success, none on failure.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any app, whatever its server, logger and type provider: this reads only route options
export function checkRouteEvents(app: FastifyInstance<any, any, any, any, any>): void {
  app.addHook('onRoute', (route) => {
    const methods = (Array.isArray(route.method) ? route.method : [route.method]) as string[];
    // Fastify's HEAD twin of a GET carries the GET's declaration.
    if (methods.every((m) => m === 'HEAD' || m === 'OPTIONS')) return;
    const where = `${methods.join(',')} ${route.url}`;
    const event = route.config?.event;
    const why = route.config?.eventWhy;
    const writes = methods.some((m) => WRITE_METHODS.has(m));
    if (event === undefined) {
      if (writes) {
        throw new Error(
          `${where} declares no event: a write's config needs \`event: '<resource>.<verb>'\` (one of src/events/event-type-schemas.ts), the event it records when it succeeds, or \`event: null\` with \`eventWhy\`, why it records none`,
        );
      }
      if (why !== undefined) throw new Error(`${where} declares \`eventWhy\` without \`event: null\``);
      return;
    }
    if (event === null) {
      if (!writes) throw new Error(`${where} declares \`event: null\`: a read records nothing unless it names its event, so it declares none`);
      if (typeof why !== 'string' || why.trim() === '') throw new Error(`${where} declares \`event: null\` without \`eventWhy\`, why it records nothing`);
      return;
    }
    if (why !== undefined) throw new Error(`${where} declares an event and \`eventWhy\`: the reason goes only with \`event: null\``);
    const types: readonly string[] = typeof event === 'string' ? [event] : event;
    if (types.length === 0) throw new Error(`${where} declares an empty list of events: declare \`event: null\` with \`eventWhy\` instead`);
    for (const type of types) if (!Object.hasOwn(EVENT_TYPES, type)) throw new Error(`${where} declares the event ${String(type)}, which is not one of src/events/event-type-schemas.ts`);
    const schema = route.schema as (Record<string, unknown> & { hide?: boolean; description?: string }) | undefined;
    if (!schema || schema.hide || route.url === '/docs' || route.url.startsWith('/docs/')) return;
    if (typeof event !== 'string') throw new Error(`${where} names several events: an operation of the document records one, which \`x-event-type\` shows`);
    const note = `Records the event \`${event}\` (GET /v1/audit_events, webhooks).`;
    route.schema = { ...schema, 'x-event-type': event, description: schema.description ? `${schema.description}\n\n${note}` : note } as typeof route.schema;
  });
}
