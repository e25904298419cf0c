import { useContext } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import type { operations } from '@workspace-platform/sdk';
import { api } from '../../api.js';
import { SessionContext } from '../../session.js';
import { nameOf, useMembers } from '../../members.js';
import { EVENT_TYPE_NAMES } from '../../../../src/events/event-type-schemas.js';
import { Loaded, PageHead, Table, Time } from '../../components.js';
import { useLoad } from '../../hooks.js';

/** What the log's `type` filter takes: an event type, or `<resource>.*` for every type of a resource. */
type TypeFilter = NonNullable<NonNullable<operations['listAuditEvents']['parameters']['query']>['type']>;

const RESOURCE_TYPES = [...new Set(EVENT_TYPE_NAMES.map((t) => `${t.slice(0, t.indexOf('.'))}.*`))];

/** The audit log with its filters in the address: type, actor, resource; pages by cursor. */
export function AuditView() {
  const me = useContext(SessionContext);
  const members = useMembers();
  const { query, route } = useLocation();
  const filter = { type: query['type'] || undefined, actor_id: query['actor_id'] || undefined, resource_id: query['resource_id'] || undefined, cursor: query['cursor'] || undefined };
  // The address may be typed by hand: its type goes to the server as it is, which refuses one no
  // event has (422, shown as the log's error). Hence the one assertion: the select offers only the
  // types of TypeFilter, an address anything.
  const load = useLoad(() => api.GET('/v1/audit_events', { params: { query: { limit: 50, ...filter, type: filter.type as TypeFilter | undefined } } }), [me?.workspace?.id, JSON.stringify(filter)]);
  const go = (next: Record<string, string | undefined>) => {
    const merged = { ...filter, cursor: undefined, ...next };
    const qs = new URLSearchParams(Object.entries(merged).filter((e): e is [string, string] => Boolean(e[1]))).toString();
    route(`/console/admin/audit${qs ? `?${qs}` : ''}`);
  };
  return (
    <section aria-labelledby="audit-title">
      <PageHead title="Audit log" id="audit-title" />
      <form class="inline-form" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Type
          <select value={filter.type ?? ''} onChange={(e) => go({ type: (e.target as HTMLSelectElement).value || undefined })}>
            <option value="">Any</option>
            {RESOURCE_TYPES.map((t) => (
              <option key={t} value={t}>{t}</option>
            ))}
            {EVENT_TYPE_NAMES.map((t) => (
              <option key={t} value={t}>{t}</option>
            ))}
          </select>
        </label>
        <label>
          Actor
          <select value={filter.actor_id ?? ''} onChange={(e) => go({ actor_id: (e.target as HTMLSelectElement).value || undefined })}>
            <option value="">Anyone</option>
            {members.list.map((m) => (
              <option key={m.user_id} value={m.user_id}>{m.name ?? m.email ?? m.user_id}</option>
            ))}
          </select>
        </label>
        <label>
          Resource id
          <input
            value={filter.resource_id ?? ''}
            placeholder="sec_…, dash_…"
            onChange={(e) => go({ resource_id: (e.target as HTMLInputElement).value.trim() || undefined })}
          />
        </label>
      </form>
      <Loaded load={load} what="events">
        {(page) => {
          const { data, next_cursor } = page;
          if (data.length === 0) return <p class="empty">No events match. Every change, secret read and sign-in in this workspace is recorded here.</p>;
          return (
            <>
              <Table
                label="Events"
                rows={data}
                rowKey={(e) => e.id}
                columns={[
                  { header: 'When', cell: (e) => <Time at={e.created_at} /> },
                  { header: 'Event', cell: (e) => e.type },
                  { header: 'By', cell: (e) => nameOf(members.byId, e.actor.id) },
                  { header: 'Resource', cell: (e) => <code>{e.resource.id}</code> },
                ]}
              />
              {next_cursor && (
                <div class="actions">
                  <button type="button" class="secondary" onClick={() => go({ ...filter, cursor: next_cursor })}>Older events</button>
                </div>
              )}
            </>
          );
        }}
      </Loaded>
    </section>
  );
}
