import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, PageQuery, UnixSeconds } from '../http/schemas.js';
import { EVENT_TYPES, EVENT_TYPE_NAMES } from '../events/event-type-schemas.js';
import { MAX_UNIX_SECONDS } from '../tokens/schemas.js';

const PREFIXES = [...new Set(EVENT_TYPE_NAMES.map((t) => t.slice(0, t.indexOf('.'))))];

/** An event type or `<resource>.*`: what the audit log's filter and webhook subscriptions take. */
export const EVENT_TYPE_FILTERS = [...EVENT_TYPE_NAMES, ...PREFIXES.map((p) => `${p}.*`)];

const typeList = EVENT_TYPE_NAMES.map((t) => `\`${t}\`: ${EVENT_TYPES[t]}`).join('\n- ');

export const EventTypeFilter = Type.Unsafe<string>({
  type: 'string',
  enum: EVENT_TYPE_FILTERS,
  description: `An event type, or \`<resource>.*\` for every type of a resource. The types:\n- ${typeList}`,
});

export const AuditEvent = Type.Object(
  {
    id: Type.String({ description: '`evt_<id>`; time-ordered' }),
    type: Type.Unsafe<string>({ type: 'string', enum: EVENT_TYPE_NAMES, description: '`<resource>.<verb>`: see the `type` filter of GET /v1/audit_events for the list' }),
    workspace_id: Type.Union([Type.String(), Type.Null()], { description: 'null for events of a user that belong to no workspace' }),
    actor: Type.Object(
      {
        kind: Type.Union([Type.Literal('user'), Type.Literal('api_token'), Type.Literal('anonymous'), Type.Literal('system')]),
        id: Type.Union([Type.String(), Type.Null()], { description: 'The user or API token id; null for an anonymous caller (a failed sign-in)' }),
      },
      { additionalProperties: false },
    ),
    credential_id: Type.Union([Type.String(), Type.Null()], { description: 'The session or API token the request carried; null for a JWT or none' }),
    resource: Type.Object({ type: Type.String(), id: Type.String() }, { additionalProperties: false }),
    request_id: Type.Union([Type.String(), Type.Null()], { description: 'The X-Request-Id of the request that did it' }),
    ip: Type.Union([Type.String(), Type.Null()]),
    user_agent: Type.Union([Type.String(), Type.Null()]),
    created_at: UnixSeconds(),
    data: Type.Record(Type.String(), Type.Unknown(), { description: 'Details of the change (names, states, ids); never a secret payload, a token or a password' }),
  },
  { title: 'AuditEvent', additionalProperties: false },
);
export type AuditEvent = Static<typeof AuditEvent>;

export const AuditEventList = ListEnvelope(AuditEvent);

const FilterId = (what: string) => Type.String({ minLength: 1, maxLength: 64, description: `Only events ${what}` });

export const ListAuditEventsQuery = PageQuery(100, 50, {
  type: Type.Optional(EventTypeFilter),
  actor_id: Type.Optional(FilterId('by this user or API token (exact id)')),
  resource_id: Type.Optional(FilterId('about this resource (exact id)')),
  since: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_UNIX_SECONDS, description: 'Only events at or after this time (Unix seconds)' })),
  until: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_UNIX_SECONDS, description: 'Only events before this time (Unix seconds)' })),
});
export type ListAuditEventsQuery = Static<typeof ListAuditEventsQuery>;
