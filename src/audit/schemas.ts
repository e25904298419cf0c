import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, PageQuery, UnixSeconds } from '../http/schemas.js';
import { ACCOUNT_EVENT_TYPES, EVENT_TYPES, EVENT_TYPE_NAMES, type EventType } from '../events/event-type-schemas.js';
import { MAX_UNIX_SECONDS } from '../tokens/schemas.js';

/** The types and `<resource>.*` of every resource among `types`. */
const filtersOf = (types: readonly string[]) => [...types, ...[...new Set(types.map((t) => t.slice(0, t.indexOf('.'))))].map((p) => `${p}.*`)];

const ACCOUNT_TYPES: readonly string[] = ACCOUNT_EVENT_TYPES;
const WORKSPACE_EVENT_TYPES = EVENT_TYPE_NAMES.filter((t) => !ACCOUNT_TYPES.includes(t));

/**
 * An event type or `<resource>.*` of a workspace: what webhook subscriptions take. A person's
 * sign-ins and sessions belong to no workspace, so no workspace's webhook could be sent one.
 */
export const EVENT_TYPE_FILTERS = filtersOf(WORKSPACE_EVENT_TYPES);
const typeList = (types: readonly EventType[]) => types.map((t) => `\`${t}\`: ${EVENT_TYPES[t]}`).join('\n- ');

/** The audit log's filter offers only what a workspace's log can hold: a sign-in belongs to no workspace. */
export const EventTypeFilter = Type.Unsafe<string>({
  type: 'string',
  enum: filtersOf(WORKSPACE_EVENT_TYPES),
  description: `An event type, or \`<resource>.*\` for every type of a resource. The types:\n- ${typeList(WORKSPACE_EVENT_TYPES)}\n\nSign-ins, sessions, device approvals and address proofs belong to no workspace: each person reads theirs at GET /v1/me/events.`,
});

export const AccountEventTypeFilter = Type.Unsafe<string>({
  type: 'string',
  enum: filtersOf(ACCOUNT_EVENT_TYPES),
  description: `An event type, or \`<resource>.*\`. The types:\n- ${typeList(ACCOUNT_EVENT_TYPES)}`,
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

const Since = Type.Integer({ minimum: 0, maximum: MAX_UNIX_SECONDS, description: 'Only events at or after this time (Unix seconds)' });
const Until = Type.Integer({ minimum: 0, maximum: MAX_UNIX_SECONDS, description: 'Only events before this time (Unix seconds)' });

export const ListMyEventsQuery = PageQuery(100, 50, {
  type: Type.Optional(AccountEventTypeFilter),
  since: Type.Optional(Since),
  until: Type.Optional(Until),
});
export type ListMyEventsQuery = Static<typeof ListMyEventsQuery>;
