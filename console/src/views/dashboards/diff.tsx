import { useLocation, useRoute } from 'preact-iso';
import type { DashboardRevision as Revision, Widget } from '@workspace-platform/sdk';
import { api, messageOf } from '../../api.js';
import { explainConflict, ifMatch } from '../../conflict.js';
import { Allowed, ConfirmButton, Loaded, PageHead, Time } from '../../components.js';
import { useAction, useLoad } from '../../hooks.js';

const show = (v: unknown) => (v === undefined ? '—' : typeof v === 'string' ? v : JSON.stringify(v, null, 2));

function Row({ field, before, after }: { field: string; before: unknown; after: unknown }) {
  return (
    <tr>
      <th scope="row">{field.replace(/_/g, ' ')}</th>
      <td class="old">
        <pre>{show(before)}</pre>
      </td>
      <td class="new">
        <pre>{show(after)}</pre>
      </td>
    </tr>
  );
}

/** A widget's field by name: a changed field may be one that only some types of widget have. */
const fieldOf = (w: Record<string, unknown> | undefined, field: string): unknown => w?.[field];

const widgetName = (w: Widget | undefined, id: string) => w?.title ?? (w?.widget_type === 'platform_metric' ? w.metric_key : id);

/** The structural diff of a revision against its parent, side by side: old values left, new right. */
function Diff({ revision, parent }: { revision: Revision; parent: Revision | null }) {
  const d = revision.structural_diff;
  if (!d || !parent) return <p class="muted">The first revision: nothing before it to compare with.</p>;
  const oldW = new Map(parent.widgets.map((w) => [w.widget_id, w]));
  const newW = new Map(revision.widgets.map((w) => [w.widget_id, w]));
  const nothing = d.dashboard_fields.length + d.widgets.added.count + d.widgets.removed.count + d.widgets.changed.count === 0;
  if (nothing) return <p class="muted">No change against the revision before it.</p>;
  return (
    <table class="diff" aria-label="Changes against the previous revision">
      <thead>
        <tr>
          <th scope="col">Field</th>
          <th scope="col">Before</th>
          <th scope="col">After</th>
        </tr>
      </thead>
      <tbody>
        {d.dashboard_fields.map((f) => (
          <Row key={f} field={f} before={parent[f]} after={revision[f]} />
        ))}
        {d.widgets.added.widget_ids.map((id) => (
          <Row key={`a${id}`} field={`widget added: ${widgetName(newW.get(id), id)}`} before={undefined} after={newW.get(id)} />
        ))}
        {d.widgets.removed.widget_ids.map((id) => (
          <Row key={`r${id}`} field={`widget removed: ${widgetName(oldW.get(id), id)}`} before={oldW.get(id)} after={undefined} />
        ))}
        {d.widgets.changed.widgets.flatMap((c) =>
          c.fields.map((f) => (
            <Row key={`c${c.widget_id}${f}`} field={`${widgetName(newW.get(c.widget_id), c.widget_id)}: ${f}`} before={fieldOf(oldW.get(c.widget_id), f)} after={fieldOf(newW.get(c.widget_id), f)} />
          )),
        )}
      </tbody>
    </table>
  );
}

/** One revision: its changes against its parent, and restoring it (confirmed, If-Match of the dashboard as read). */
export function RevisionView() {
  const { params } = useRoute();
  const { route } = useLocation();
  const id = params['id'];
  const rid = params['rid'];
  const dashboard = useLoad(() => api.GET('/v1/dashboards/{id}', { params: { path: { id } } }), [id]);
  const load = useLoad<{ revision: Revision; parent: Revision | null }>(async () => {
    const rev = await api.GET('/v1/dashboards/{id}/revisions/{revision_id}', { params: { path: { id, revision_id: rid } } });
    if (rev.error || !rev.data) return { error: rev.error };
    const r = rev.data;
    if (!r.parent_revision_id) return { data: { revision: r, parent: null } };
    const parent = await api.GET('/v1/dashboards/{id}/revisions/{revision_id}', { params: { path: { id, revision_id: r.parent_revision_id } } });
    if (parent.error) return { error: parent.error };
    return { data: { revision: r, parent: parent.data } };
  }, [id, rid]);
  const restore = useAction();
  const d = dashboard.data;
  return (
    <section aria-labelledby="revision-title">
      <p class="crumbs">
        <a href={`/console/dashboards/${id}`}>{d?.name ?? 'Dashboard'}</a> / <a href={`/console/dashboards/${id}/revisions`}>History</a> /
      </p>
      <Loaded load={load} what="the revision">
        {({ revision, parent }) => (
          <>
            <PageHead title={`Revision of ${new Date(revision.created_at * 1000).toLocaleString()}`} id="revision-title">
              {d && d.current_revision_id !== revision.id && (
                <Allowed to="write">
                  <ConfirmButton
                    label="Restore this revision"
                    title="Restore this revision?"
                    body={<p>The dashboard gets this revision's name, filters and widgets as a new revision; nothing is lost from its history.</p>}
                    confirmLabel="Restore"
                    onConfirm={async () => {
                      const res = await restore.run(() =>
                        api.POST('/v1/dashboards/{id}/revisions/{revision_id}:restore', { params: { path: { id, revision_id: rid }, header: ifMatch(d.etag) }, body: null }),
                      );
                      if (res.ok) route(`/console/dashboards/${id}/revisions`);
                      else await dashboard.reload();
                    }}
                  />
                </Allowed>
              )}
            </PageHead>
            <p class="muted">
              {revision.source} · <Time at={revision.created_at} />
              {revision.summary ? ` · ${revision.summary}` : ''}
            </p>
            {restore.error ? (
              <p role="alert" class="error">
                {explainConflict(restore.error, 'dashboard', 'restore') ?? messageOf(restore.error)}
              </p>
            ) : null}
            {revision.snippet_etag_drift.length > 0 && (
              <p class="warning">
                {revision.snippet_etag_drift.length} snippet widget{revision.snippet_etag_drift.length > 1 ? 's' : ''} pin a snippet that changed since;{' '}
                {revision.snippet_etag_drift.some((x) => x.restore_action === 'blocked') ? 'a restore is blocked: a snippet it uses was deleted.' : 'a restore keeps the pins as they are.'}
              </p>
            )}
            <Diff revision={revision} parent={parent} />
          </>
        )}
      </Loaded>
    </section>
  );
}
