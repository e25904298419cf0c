import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, PageQuery, PathId, requestHeaders, UnixSeconds } from '../http/schemas.js';
import { patterned } from '../shared/pattern-schemas.js';

/** The spec's notification, every field always present (`read_at` null while unread). */
export const Notification = Type.Object(
  {
    id: Type.String({ description: '`ntf_<id>`' }),
    type: Type.String({ description: 'What happened, e.g. `machine_expiry`' }),
    resource_type: Type.String({ description: 'The kind of resource it is about, e.g. `machine`' }),
    resource_id: Type.String(),
    title: Type.String(),
    body: Type.String(),
    severity: Type.String({ description: '`info`, `warning` or `critical`' }),
    context: Type.Object({}, { additionalProperties: true, description: 'Free-form details (for machine_expiry: workspace_id, suspension_id, hostname, expires_at)' }),
    read_at: Type.Union([UnixSeconds(), Type.Null()], { description: 'When the caller marked it read; null while unread' }),
    created_at: UnixSeconds(),
  },
  { title: 'Notification', additionalProperties: false },
);
export type Notification = Static<typeof Notification>;

export const NotificationList = ListEnvelope(Notification, "The caller's notifications, newest first");

export const MAX_NOTIFICATIONS_PAGE = 50;

export const ListNotificationsQuery = PageQuery(MAX_NOTIFICATIONS_PAGE, MAX_NOTIFICATIONS_PAGE, {
  unread: Type.Optional(Type.Unsafe<'true' | 'false'>({ type: 'string', enum: ['true', 'false'], description: '`true`: only unread ones; `false` or absent: all' })),
});
export type ListNotificationsQuery = Static<typeof ListNotificationsQuery>;

export const StreamHeaders = Type.Object({
  ...requestHeaders().properties,
  'last-event-id': Type.Optional(
    Type.String({
      minLength: 26,
      maxLength: 30,
      ...patterned('^([Nn][Tt][Ff]_)?[0-9A-Za-z]{26}$', 'a notification id, ntf_<id>', 'ntf_01JD3V5Q6Y7Z8A9B0C1D2E3F4G'),
      description: 'Resume after this notification: the id of the last event received (browsers send it when they reconnect)',
    }),
  ),
});

export const NotificationParams = Type.Object({ id: PathId(54, 'Notification id, `ntf_<id>` or bare; length 1-54') });
