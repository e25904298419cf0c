import { useRoute } from 'preact-iso';
import type { DashboardRevision as Revision } from '@workspace-platform/sdk';
import { api, messageOf } from '../../api.js';
import { Badge, Loaded, PageHead, Time } from '../../components.js';
import { useLoad, usePaged } from '../../hooks.js';
import { nameOf, useMembers } from '../../members.js';

const SOURCE_TEXT: Record<Revision['source'], string> = {
  manual: 'edited',
  automatic: 'changed by the platform',
  restore: 'restored',
  reset: 'reset',
  backfill: 'recorded from before history',
};

function changes(r: Revision): string {
  const d = r.structural_diff;
  if (!d) return 'first revision';
  const parts = [
    ...d.dashboard_fields.map((f) => f.replace(/_/g, ' ')),
    d.widgets.added.count ? `${d.widgets.added.count} widget${d.widgets.added.count > 1 ? 's' : ''} added` : '',
    d.widgets.removed.count ? `${d.widgets.removed.count} removed` : '',
    d.widgets.changed.count ? `${d.widgets.changed.count} changed` : '',
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : 'no change';
}

/** A dashboard's revisions, newest first: what each changed, by whom, when, and how (its source). */
export function RevisionsView() {
  const { params } = useRoute();
  const id = params['id'];
  const members = useMembers();
  const dashboard = useLoad(() => api.GET('/v1/dashboards/{id}', { params: { path: { id } } }), [id]);
  const revisions = usePaged((cursor) => api.GET('/v1/dashboards/{id}/revisions', { params: { path: { id }, query: { limit: 10, ...(cursor ? { cursor } : {}) } } }), [id]);
  const name = dashboard.data?.name ?? 'Dashboard';
  const current = dashboard.data?.current_revision_id;
  return (
    <section aria-labelledby="revisions-title">
      <p class="crumbs">
        <a href={`/console/dashboards/${id}`}>{name}</a> /
      </p>
      <PageHead title="History" id="revisions-title" />
      <Loaded load={revisions.load} what="the history">
        {() => (
          <>
            <ol class="timeline">
              {revisions.rows!.map((r) => (
                <li key={r.id}>
                  <div class="when">
                    <Time at={r.created_at} />
                  </div>
                  <div>
                    <p>
                      <Badge value={r.source} tone={r.source === 'manual' ? 'info' : 'warn'} /> {SOURCE_TEXT[r.source]} by <strong>{nameOf(members.byId, r.author_id)}</strong>
                      {r.id === current && <span class="muted"> (current)</span>}
                    </p>
                    {r.summary && <p>{r.summary}</p>}
                    <p class="muted">{changes(r)}</p>
                    <a href={`/console/dashboards/${id}/revisions/${r.id}`}>{r.parent_revision_id ? 'See the changes' : 'See this revision'}</a>
                  </div>
                </li>
              ))}
            </ol>
            {revisions.moreError ? (
              <p role="alert" class="error">
                {messageOf(revisions.moreError)}
              </p>
            ) : null}
            {revisions.hasMore && (
              <div class="actions">
                <button type="button" class="secondary" onClick={() => void revisions.more()}>
                  Older revisions
                </button>
              </div>
            )}
          </>
        )}
      </Loaded>
    </section>
  );
}
