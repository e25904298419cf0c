/**
 * What the audit log and a person's security log share: an event's resource as a link to its
 * page, an event's whole record, dates typed by people turned into the API's `since`/`until`, the
 * from/to days of their filter forms, their Details column and their next page.
 */
import type { Schemas } from '@workspace-platform/sdk';
import { useLayoutEffect, useRef } from 'preact/hooks';
import { Time, type Column } from './components.js';

type AuditEvent = Schemas['AuditEvent'];

const idIn = (data: Record<string, unknown>, key: string) => (typeof data[key] === 'string' ? data[key] : null);

/**
 * The console page of an event's resource: its own page where it has one, else the page that
 * lists it; a version goes to its secret or package (named in the event's data). Null for a
 * resource the console has no page for (a workspace, a snippet, a user).
 */
export function resourceHref(e: AuditEvent): string | null {
  const { type, id } = e.resource;
  const data = e.data;
  switch (type) {
    case 'secret':
      return `/console/secrets/${id}`;
    case 'secret_version':
      return idIn(data, 'secret_id') && `/console/secrets/${idIn(data, 'secret_id')}`;
    case 'dashboard':
      return `/console/dashboards/${id}`;
    case 'package':
      return `/console/packages/${id}`;
    case 'package_version':
      return idIn(data, 'package_id') && `/console/packages/${idIn(data, 'package_id')}`;
    case 'install':
      return `/console/installs/${id}`;
    case 'repository_change_request':
      return idIn(data, 'install_id') && `/console/installs/${idIn(data, 'install_id')}/changes/${id}`;
    case 'webhook':
      return `/console/admin/webhooks/${id}`;
    case 'webhook_delivery':
      return idIn(data, 'webhook_id') && `/console/admin/webhooks/${idIn(data, 'webhook_id')}`;
    case 'member':
    case 'invitation':
      return '/console/admin/members';
    case 'api_token':
      return '/console/admin/tokens';
    case 'compute_config':
      return '/console/compute';
    case 'machine':
      return '/console/machines';
    case 'notification':
      return '/console/notifications';
    case 'session':
      return '/console/account/sessions';
    default:
      return null;
  }
}

/** The resource's id, linked to its page when the console has one. */
export function ResourceLink({ e }: { e: AuditEvent }) {
  const href = resourceHref(e);
  const label = `${e.resource.type} ${e.resource.id}`;
  return href ? (
    <a href={href} aria-label={`${label}, open its page`}>
      <code>{e.resource.id}</code>
    </a>
  ) : (
    <code title={label}>{e.resource.id}</code>
  );
}

/** Everything an event carries, for the detail view. */
export function EventDetail({ e, actorName, onClose }: { e: AuditEvent; actorName: string; onClose: () => void }) {
  // Opened from a row: the eye (and a screen reader) goes to it, in the frame it first shows in
  // (an effect after paint would leave a frame where the detail is there and the focus is not).
  const heading = useRef<HTMLHeadingElement>(null);
  useLayoutEffect(() => heading.current?.focus(), [e.id]);
  return (
    <section class="card" aria-labelledby={`event-${e.id}`}>
      <h2 id={`event-${e.id}`} tabIndex={-1} ref={heading}>
        {e.type}
      </h2>
      <dl class="facts">
        <dt>Event</dt>
        <dd>
          <code>{e.id}</code>
        </dd>
        <dt>When</dt>
        <dd>
          <Time at={e.created_at} /> ({new Date(e.created_at * 1000).toLocaleString()})
        </dd>
        <dt>By</dt>
        <dd>
          {actorName} ({e.actor.kind}
          {e.actor.id ? (
            <>
              , <code>{e.actor.id}</code>
            </>
          ) : null}
          )
        </dd>
        <dt>Resource</dt>
        <dd>
          {e.resource.type} <ResourceLink e={e} />
        </dd>
        <dt>IP address</dt>
        <dd>{e.ip ?? 'not recorded'}</dd>
        <dt>User agent</dt>
        <dd>{e.user_agent ?? 'not recorded'}</dd>
        <dt>Credential</dt>
        <dd>{e.credential_id ? <code>{e.credential_id}</code> : 'none recorded'}</dd>
        <dt>Request id</dt>
        <dd>{e.request_id ? <code>{e.request_id}</code> : 'none'}</dd>
        <dt>Workspace</dt>
        <dd>{e.workspace_id ? <code>{e.workspace_id}</code> : 'none (an account event)'}</dd>
        <dt>Details</dt>
        <dd>
          <pre class="source">{JSON.stringify(e.data, null, 2)}</pre>
        </dd>
      </dl>
      <div class="actions">
        <button type="button" class="secondary" onClick={onClose}>
          Close
        </button>
      </div>
    </section>
  );
}

/** A `YYYY-MM-DD` of a date input as Unix seconds at the start of that day here (`next`: of the day after, an inclusive end). */
export function dayStart(day: string | undefined, next = false): number | undefined {
  const m = day ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(day) : null;
  if (!m) return undefined;
  const at = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + (next ? 1 : 0)).getTime() / 1000;
  return Number.isFinite(at) && at >= 0 ? Math.floor(at) : undefined;
}

/** From and to days of a log's filter form: each bounds the other. */
export function DayRange({ from, to, onChange }: { from: string | undefined; to: string | undefined; onChange: (change: { from?: string | undefined; to?: string | undefined }) => void }) {
  const day = (e: Event) => (e.target as HTMLInputElement).value || undefined;
  return (
    <>
      <label>
        From
        <input type="date" value={from ?? ''} max={to} onChange={(e) => onChange({ from: day(e) })} />
      </label>
      <label>
        To
        <input type="date" value={to ?? ''} min={from} onChange={(e) => onChange({ to: day(e) })} />
      </label>
    </>
  );
}

/** A log's column of Details buttons: each opens (or closes) that event's detail. */
export function detailsColumn(open: string | null, setOpen: (id: string | null) => void): Column<AuditEvent> {
  return {
    header: 'Details',
    quiet: true,
    cell: (e) => (
      <button type="button" class="secondary" aria-expanded={open === e.id} onClick={() => setOpen(open === e.id ? null : e.id)}>
        Details
      </button>
    ),
  };
}

/** The next page of a log, when the server says there is one. */
export function OlderEvents({ cursor, onMore }: { cursor: string | null | undefined; onMore: (cursor: string) => void }) {
  if (!cursor) return null;
  return (
    <div class="actions">
      <button type="button" class="secondary" onClick={() => onMore(cursor)}>
        Older events
      </button>
    </div>
  );
}
