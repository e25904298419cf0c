import { useContext, useEffect, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import type { Install, Render } from '@workspace-platform/sdk';
import { api, messageOf } from '../../api.js';
import { explainConflict, ifMatch } from '../../conflict.js';
import { OperationProgress } from '../../operation.js';
import { can, SessionContext } from '../../session.js';
import { Allowed, Badge, ConfirmButton, CopyButton, Field, FormError, inputProps, Loaded, PageHead, Time } from '../../components.js';
import { fieldErrors } from '../../format.js';
import { useAction, useLoad } from '../../hooks.js';
import { Files } from './files.js';
import { ChangeInstall } from './change.js';
import { changeHref, InstallTabs, plural, WaitingChange } from './changes.js';

/** The workspace's installs with the state of their newest render. */
export function InstallsView() {
  const me = useContext(SessionContext);
  const load = useLoad(() => api.GET('/v1/installs', { params: { query: { limit: 100 } } }), [me?.workspace?.id]);
  return (
    <section aria-labelledby="installs-title">
      <PageHead title="Installs" id="installs-title" />
      <Loaded load={load} what="installs">
        {(page) => {
          const rows = page.data;
          if (rows.length === 0) {
            return (
              <p class="empty">
                No installs. Open a <a href="/console/packages">package</a>, preview a version with your values, and install it.
              </p>
            );
          }
          return <InstallRows installs={rows} />;
        }}
      </Loaded>
    </section>
  );
}

/** Where a render without a commit on main stands, in words: it waits for review, or it was called off. */
const RENDER_WORDS: Partial<Record<Render['state'], string>> = {
  awaiting_merge: 'not on main until its change request is merged',
  canceled: 'never reached main: its change request was closed',
};
/**
 * The cluster an install is placed on, and moving it to another or to none (PATCH with
 * If-Match; it renders nothing). A conflict brings their version in, the choice on screen stays.
 */
/** Installs a row each: name, version, last render's state (the installs list and a cluster's page). */
export function InstallRows({ installs, labelledBy }: { installs: Install[]; labelledBy?: string }) {
  return (
    <ul class="rows" aria-labelledby={labelledBy}>
      {installs.map((i) => (
        <li key={i.id}>
          <span>
            <a href={`/console/installs/${i.id}`}>{i.name}</a> <span class="muted">{i.current_version?.semver ?? 'not rendered yet'}</span>
          </span>
          {i.last_render && <Badge value={i.last_render.state} />}
        </li>
      ))}
    </ul>
  );
}

function InstallCluster({ install, onChanged }: { install: Install; onChanged: () => Promise<unknown> }) {
  const me = useContext(SessionContext);
  const clusters = useLoad(() => api.GET('/v1/clusters', { params: { query: { limit: 100 } } }), [me?.workspace?.id]);
  const [chosen, setChosen] = useState(install.cluster_id ?? '');
  const move = useAction();
  const errors = fieldErrors(move.error);
  const conflict = explainConflict(move.error, 'install', 'move');
  const all = clusters.data?.data ?? [];
  const current = all.find((c) => c.id === install.cluster_id);
  const submit = async (e: Event) => {
    e.preventDefault();
    const res = await move.run(() => api.PATCH('/v1/installs/{id}', { params: { path: { id: install.id }, header: ifMatch(install.etag) }, body: { cluster_id: chosen || null } }));
    if (res.ok || explainConflict(res.error, 'install', 'move')) await onChanged();
  };
  return (
    <>
      <dt>Cluster</dt>
      <dd>
        {install.cluster_id ? <a href={`/console/clusters/${install.cluster_id}`}>{current?.name ?? install.cluster_id}</a> : 'none'}
        {can(me, 'write') && (
          <form class="inline-form" onSubmit={submit} aria-label="Place on a cluster" noValidate>
            <Field label="Place on" name="install-cluster" error={errors['cluster_id']}>
              <select {...inputProps('install-cluster', errors['cluster_id'])} value={chosen} onChange={(e) => setChosen((e.target as HTMLSelectElement).value)}>
                <option value="">no cluster</option>
                {all.map((c) => (
                  <option key={c.id} value={c.id}>
                    {c.name} ({c.region ?? 'any region'})
                  </option>
                ))}
                {install.cluster_id && !current && clusters.data && <option value={install.cluster_id}>{install.cluster_id}</option>}
              </select>
            </Field>
            <button type="submit" class="secondary" disabled={move.busy || chosen === (install.cluster_id ?? '')}>
              Move
            </button>
            {conflict && (
              <p role="alert" class="error">
                {conflict}
              </p>
            )}
            <FormError error={conflict ? null : move.error} fields={['cluster_id']} />
          </form>
        )}
      </dd>
    </>
  );
}

/** A commit's files, read when asked. */
function CommitFiles({ render }: { render: Render }) {
  const load = useLoad(() => api.GET('/v1/renders/{id}/files', { params: { path: { id: render.id } } }), [render.id]);
  return (
    <Loaded load={load} what="the files">
      {(tree) => {
        const files = Object.fromEntries(tree.files.map((f) => [f.path, f.content ?? `(${f.size} bytes, not text)`]));
        return <Files files={files} label={`Files of commit ${render.commit_sha?.slice(0, 10)}`} />;
      }}
    </Loaded>
  );
}

/**
 * One install: its versions and values (changed with If-Match, which renders again), its
 * renders as the git history of its repository, a commit's files, and restoring a render.
 */
export function InstallView() {
  const me = useContext(SessionContext);
  const { params } = useRoute();
  const id = params['id'];
  const install = useLoad(() => api.GET('/v1/installs/{id}', { params: { path: { id } } }), [id]);
  const renders = useLoad(() => api.GET('/v1/installs/{id}/renders', { params: { path: { id }, query: { limit: 100 } } }), [id]);
  const repo = useLoad(() => api.GET('/v1/installs/{id}/repository', { params: { path: { id } } }), [id]);
  const [watching, setWatching] = useState<string | null>(null);
  const [openCommit, setOpenCommit] = useState<string | null>(null);
  const restore = useAction();
  const remove = useAction();
  const { route } = useLocation();
  const refresh = () => Promise.all([install.reload(), renders.reload(), repo.reload()]);
  const i = install.data;
  // A render under way when the page opens (a new install's first) is followed like one started here.
  const pending = i?.last_render && (i.last_render.state === 'queued' || i.last_render.state === 'running') ? i.last_render.id : null;
  useEffect(() => {
    if (pending && !watching) void follow(pending);
  }, [pending]);
  /** After a write that made a render: follow its operation until it is done. */
  const follow = async (renderId: string | null | undefined) => {
    setWatching(null);
    if (renderId) {
      const render = await api.GET('/v1/renders/{id}', { params: { path: { id: renderId } } });
      setWatching(render.data?.operation_id ?? null);
    }
    await refresh();
  };
  return (
    <section aria-labelledby="install-title">
      <p class="crumbs">
        <a href="/console/installs">Installs</a> /
      </p>
      <Loaded load={install} what="the install">
        {() => (
          <>
            <PageHead title={i!.name} id="install-title">
              <Allowed to="installs.delete">
                <ConfirmButton
                  label="Delete install"
                  title={`Delete ${i!.name}?`}
                  danger
                  typeToConfirm={i!.name}
                  body={<p>The install and its git repository are removed; renders under way are cancelled. Its renders stay readable in the audit log. The name is free again.</p>}
                  onConfirm={async () => {
                    const res = await remove.run(() => api.DELETE('/v1/installs/{id}', { params: { path: { id }, header: ifMatch(i!.etag) } }));
                    if (res.ok) route('/console/installs');
                    else await refresh();
                  }}
                />
              </Allowed>
            </PageHead>
            <InstallTabs id={id} current="overview" open={Boolean(i!.open_change_request_id)} />
            <WaitingChange install={i!} />
            <dl class="facts">
              <dt>Version</dt>
              <dd>
                {i!.current_version?.semver ?? 'none yet'}
                {i!.desired_version.id !== i!.current_version?.id && <span class="muted"> → {i!.desired_version.semver} wanted</span>}
              </dd>
              <dt>Newest render</dt>
              <dd>
                {i!.last_render ? (
                  <>
                    <Badge value={i!.last_render.state} /> {i!.last_render.error}
                  </>
                ) : (
                  'none'
                )}
              </dd>
              <InstallCluster install={i!} onChanged={refresh} />
              <dt>Automatic updates</dt>
              <dd>{i!.automatic_updates_enabled ? 'on' : 'off'}</dd>
              <dt>Delivery</dt>
              <dd>
                {i!.delivery === 'change_request' ? `each render waits for review as a change request (${plural(i!.required_approvals, 'approval')} required)` : 'each render moves main at once'}
              </dd>
              <dt>Repository</dt>
              <dd>
                {repo.data?.clone_url ? (
                  <>
                    <code>{repo.data.clone_url}</code> <CopyButton value={repo.data.clone_url} label="Copy clone URL" />
                  </>
                ) : repo.error ? (
                  messageOf(repo.error)
                ) : (
                  '…'
                )}
              </dd>
            </dl>
          </>
        )}
      </Loaded>
      {remove.error ? (
        <p role="alert" class="error">
          {explainConflict(remove.error, 'install', 'delete') ?? messageOf(remove.error)}
        </p>
      ) : null}
      {watching && <OperationProgress key={watching} id={watching} onDone={() => void refresh()} />}
      {i && can(me, 'write') && <ChangeInstall install={i} headRenderId={renders.data?.data.find((r) => r.commit_sha && r.commit_sha === repo.data?.head_commit_sha)?.id ?? null} onApplied={follow} />}
      <h2 id="history-title">History</h2>
      {restore.error ? (
        <p role="alert" class="error">
          {explainConflict(restore.error, 'install', 'restore') ?? messageOf(restore.error)}
        </p>
      ) : null}
      <Loaded load={renders} what="renders">
        {(page) => {
          const rows = page.data;
          if (rows.length === 0) return <p class="empty">No renders yet.</p>;
          return (
            <ol class="timeline" aria-labelledby="history-title">
              {rows.map((r) => (
                <li key={r.id}>
                  <div class="when">
                    <Time at={r.created_at} />
                  </div>
                  <div>
                    <p>
                      <Badge value={r.state} /> {r.message}
                    </p>
                    <p class="muted">
                      {r.commit_sha ? (
                        <>
                          commit <code>{r.commit_sha.slice(0, 10)}</code>
                        </>
                      ) : (
                        (RENDER_WORDS[r.state] ?? 'no commit')
                      )}
                      {r.restored_from_render_id && <> · restored from {r.restored_from_render_id}</>}
                      {r.repository_change_request_id && (
                        <>
                          {' '}
                          · <a href={changeHref(id, r.repository_change_request_id)}>its change request</a>
                        </>
                      )}
                    </p>
                    <div class="actions">
                      {r.commit_sha && (
                        <button type="button" class="secondary" aria-expanded={openCommit === r.id} onClick={() => setOpenCommit(openCommit === r.id ? null : r.id)}>
                          {openCommit === r.id ? 'Hide files' : 'Files'}
                        </button>
                      )}
                      {r.state === 'succeeded' && i && can(me, 'write') && r.commit_sha !== repo.data?.head_commit_sha && (
                        <ConfirmButton
                          label="Restore"
                          title="Restore this render?"
                          body={<p>Its files become the newest commit of the repository, as a new render; nothing is lost from the history.</p>}
                          onConfirm={async () => {
                            const res = await restore.run(() =>
                              api.POST('/v1/installs/{id}:restore', {
                                params: { path: { id }, header: { ...ifMatch(i.etag), 'idempotency-key': crypto.randomUUID() } },
                                body: { render_id: r.id },
                              }),
                            );
                            await follow(res.ok ? res.data?.render.id : null);
                          }}
                        />
                      )}
                    </div>
                    {openCommit === r.id && <CommitFiles render={r} />}
                  </div>
                </li>
              ))}
            </ol>
          );
        }}
      </Loaded>
    </section>
  );
}
