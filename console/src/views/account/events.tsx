import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import type { operations } from '@workspace-platform/sdk';
import { api } from '../../api.js';
import { ACCOUNT_EVENT_TYPES, EVENT_TYPES } from '../../../../src/events/event-type-schemas.js';
import { PageHead, Loaded, Table, Time } from '../../components.js';
import { DayRange, dayStart, detailsColumn, EventDetail, OlderEvents } from '../../events.js';
import { useLoad } from '../../hooks.js';

type AccountTypeFilter = NonNullable<NonNullable<operations['listMeEvents']['parameters']['query']>['type']>;

const WILDCARDS = [...new Set(ACCOUNT_EVENT_TYPES.map((t) => `${t.slice(0, t.indexOf('.'))}.*`))];

/** The account area's pages, each linking the other. */
export function AccountTabs({ current }: { current: 'sessions' | 'events' }) {
  return (
    <nav aria-label="Your account" class="inline-form">
      <a href="/console/account/sessions" aria-current={current === 'sessions' ? 'page' : undefined}>
        Your sessions
      </a>
      <a href="/console/account/events" aria-current={current === 'events' ? 'page' : undefined}>
        Your security log
      </a>
    </nav>
  );
}

/** Who did it, in a person's own log: them, or someone not signed in (a failed sign-in naming their account). */
const byWhom = (kind: string) => (kind === 'anonymous' ? 'someone not signed in' : kind === 'system' ? 'the platform' : kind === 'api_token' ? 'an API token' : 'you');

/**
 * The caller's security log (GET /v1/me/events): their sign-ins, failed ones naming their
 * account, sessions ended, device sign-ins approved or denied, newest first; where from (IP and
 * client) on every row, as that is what a person checks it for. Filters in the address.
 */
export function MyEventsView() {
  const { query, route } = useLocation();
  const [open, setOpen] = useState<string | null>(null);
  const filter = { type: query['type'] || undefined, from: query['from'] || undefined, to: query['to'] || undefined, cursor: query['cursor'] || undefined };
  const since = dayStart(filter.from);
  const until = dayStart(filter.to, true);
  const load = useLoad(
    () =>
      api.GET('/v1/me/events', {
        params: {
          query: {
            limit: 50,
            type: filter.type as AccountTypeFilter | undefined,
            cursor: filter.cursor,
            ...(since !== undefined ? { since } : {}),
            ...(until !== undefined ? { until } : {}),
          },
        },
      }),
    [JSON.stringify(filter)],
  );
  const go = (next: Record<string, string | undefined>) => {
    const merged = { ...filter, cursor: undefined, ...next };
    const qs = new URLSearchParams(Object.entries(merged).filter((e): e is [string, string] => Boolean(e[1]))).toString();
    setOpen(null);
    route(`/console/account/events${qs ? `?${qs}` : ''}`);
  };
  const value = (e: Event) => (e.target as HTMLInputElement | HTMLSelectElement).value.trim() || undefined;
  return (
    <section aria-labelledby="my-events-title">
      <PageHead title="Your security log" id="my-events-title" />
      <AccountTabs current="events" />
      <p class="muted">
        Your sign-ins (and failed ones naming your account), sessions ended and device sign-ins approved or denied, in every workspace. Something you do not recognise? End the session under Your
        sessions and change your password.
      </p>
      <form class="inline-form" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Type
          <select value={filter.type ?? ''} onChange={(e) => go({ type: value(e) })}>
            <option value="">Any</option>
            {WILDCARDS.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
            {ACCOUNT_EVENT_TYPES.map((t) => (
              <option key={t} value={t} title={EVENT_TYPES[t]}>
                {t}
              </option>
            ))}
          </select>
        </label>
        <DayRange from={filter.from} to={filter.to} onChange={go} />
      </form>
      <Loaded load={load} what="your security log">
        {(page) => {
          const { data, next_cursor } = page;
          if (data.length === 0) return <p class="empty">{filter.type || filter.from || filter.to ? 'No events match these filters.' : 'Nothing recorded yet.'}</p>;
          const shown = data.find((e) => e.id === open);
          return (
            <>
              {shown && <EventDetail e={shown} actorName={byWhom(shown.actor.kind)} onClose={() => setOpen(null)} />}
              <Table
                label="Your events"
                rows={data}
                rowKey={(e) => e.id}
                columns={[
                  { header: 'When', cell: (e) => <Time at={e.created_at} /> },
                  { header: 'Event', cell: (e) => e.type },
                  {
                    header: 'From',
                    cell: (e) => (
                      <>
                        {e.ip ?? 'unknown address'}
                        <br />
                        <span class="muted">{e.user_agent ?? 'unknown client'}</span>
                      </>
                    ),
                  },
                  detailsColumn(open, setOpen),
                ]}
              />
              <OlderEvents cursor={next_cursor} onMore={(cursor) => go({ cursor: cursor })} />
            </>
          );
        }}
      </Loaded>
    </section>
  );
}
