import { useContext, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import type { operations } from '@workspace-platform/sdk';
import { api } from '../../api.js';
import { SessionContext } from '../../session.js';
import { nameOf, useMembers } from '../../members.js';
import { ACCOUNT_EVENT_TYPES, EVENT_TYPE_NAMES } from '../../../../src/events/event-type-schemas.js';
import { Loaded, PageHead, Table, Time } from '../../components.js';
import { DayRange, dayStart, detailsColumn, EventDetail, OlderEvents, ResourceLink } from '../../events.js';
import { useLoad } from '../../hooks.js';

/** What the log's `type` filter takes: an event type, or `<resource>.*` for every type of a resource. */
type TypeFilter = NonNullable<NonNullable<operations['listAuditEvents']['parameters']['query']>['type']>;

// Sign-ins, sessions and device approvals belong to no workspace: the workspace's log never holds
// them (each person reads theirs in their security log), so the filter does not offer them.
const ACCOUNT: readonly string[] = ACCOUNT_EVENT_TYPES;
const WORKSPACE_TYPES = EVENT_TYPE_NAMES.filter((t) => !ACCOUNT.includes(t));
const RESOURCE_TYPES = [...new Set(WORKSPACE_TYPES.map((t) => `${t.slice(0, t.indexOf('.'))}.*`))];

/** The audit log with its filters in the address: type, actor, resource, days; pages by cursor; an event's whole record on demand. */
export function AuditView() {
  const me = useContext(SessionContext);
  const members = useMembers();
  const { query, route } = useLocation();
  const [open, setOpen] = useState<string | null>(null);
  const filter = {
    type: query['type'] || undefined,
    actor_id: query['actor_id'] || undefined,
    resource_id: query['resource_id'] || undefined,
    from: query['from'] || undefined,
    to: query['to'] || undefined,
    cursor: query['cursor'] || undefined,
  };
  const since = dayStart(filter.from);
  const until = dayStart(filter.to, true);
  // The address may be typed by hand: its type goes to the server as it is, which refuses one no
  // event has (422, shown as the log's error). Hence the one assertion: the select offers only the
  // types of TypeFilter, an address anything.
  const load = useLoad(
    () =>
      api.GET('/v1/audit_events', {
        params: {
          query: {
            limit: 50,
            type: filter.type as TypeFilter | undefined,
            actor_id: filter.actor_id,
            resource_id: filter.resource_id,
            cursor: filter.cursor,
            ...(since !== undefined ? { since } : {}),
            ...(until !== undefined ? { until } : {}),
          },
        },
      }),
    [me?.workspace?.id, JSON.stringify(filter)],
  );
  const go = (next: Record<string, string | undefined>) => {
    const merged = { ...filter, cursor: undefined, ...next };
    const qs = new URLSearchParams(Object.entries(merged).filter((e): e is [string, string] => Boolean(e[1]))).toString();
    setOpen(null);
    route(`/console/admin/audit${qs ? `?${qs}` : ''}`);
  };
  const value = (e: Event) => (e.target as HTMLInputElement | HTMLSelectElement).value.trim() || undefined;
  const filtered = Boolean(filter.type || filter.actor_id || filter.resource_id || filter.from || filter.to);
  return (
    <section aria-labelledby="audit-title">
      <PageHead title="Audit log" id="audit-title" />
      <form class="inline-form" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Type
          <select value={filter.type ?? ''} onChange={(e) => go({ type: value(e) })}>
            <option value="">Any</option>
            {RESOURCE_TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
            {WORKSPACE_TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        <label>
          Actor
          <select value={filter.actor_id ?? ''} onChange={(e) => go({ actor_id: value(e) })}>
            <option value="">Anyone</option>
            {members.list.map((m) => (
              <option key={m.user_id} value={m.user_id}>
                {m.name ?? m.email ?? m.user_id}
              </option>
            ))}
          </select>
        </label>
        <label>
          Resource id
          <input value={filter.resource_id ?? ''} placeholder="sec_…, dash_…" onChange={(e) => go({ resource_id: value(e) })} />
        </label>
        <DayRange from={filter.from} to={filter.to} onChange={go} />
      </form>
      <Loaded load={load} what="events">
        {(page) => {
          const { data, next_cursor } = page;
          if (data.length === 0)
            return (
              <p class="empty">
                {filtered ? 'No events match these filters. ' : 'No events yet. '}
                Every change and every secret read in this workspace is recorded here. Sign-ins belong to no workspace: yours are in <a href="/console/account/events">your security log</a>.
              </p>
            );
          const shown = data.find((e) => e.id === open);
          return (
            <>
              {shown && <EventDetail e={shown} actorName={shown.actor.kind === 'anonymous' ? 'someone not signed in' : nameOf(members.byId, shown.actor.id)} onClose={() => setOpen(null)} />}
              <Table
                label="Events"
                rows={data}
                rowKey={(e) => e.id}
                columns={[
                  { header: 'When', cell: (e) => <Time at={e.created_at} /> },
                  { header: 'Event', cell: (e) => e.type },
                  { header: 'By', cell: (e) => nameOf(members.byId, e.actor.id) },
                  { header: 'Resource', cell: (e) => <ResourceLink e={e} /> },
                  detailsColumn(open, setOpen),
                ]}
              />
              <OlderEvents cursor={next_cursor} onMore={(cursor) => go({ ...filter, cursor: cursor })} />
            </>
          );
        }}
      </Loaded>
    </section>
  );
}
