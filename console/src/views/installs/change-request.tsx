import { useContext } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api } from '../../api.js';
import { Badge, CopyButton, Loaded, PageHead, Time } from '../../components.js';
import { useLoad } from '../../hooks.js';
import { nameOf, useMembers } from '../../members.js';
import { SessionContext } from '../../session.js';
import { InstallTabs, plural, standing, WaitingChange } from './changes.js';
import { ChangeDiff } from './side-by-side.js';
import { ChangeRequestActions } from './change-actions.js';

const short = (sha: string) => sha.slice(0, 10);

/** The change request's files at `head`: read again when the head moves (a re-parent onto a moved main). */
function Diff({ id, head }: { id: string; head: string }) {
  const diff = useLoad(() => api.GET('/v1/repository_change_requests/{id}/diff', { params: { path: { id } } }), [id, head]);
  return (
    <Loaded load={diff} what="the diff">
      {(d) => <ChangeDiff files={d.files} />}
    </Loaded>
  );
}

/**
 * One change request: what it is and where it stands (state, author, base and head commits, its
 * ref with the git command that fetches it, approvals, what blocks its merge), and its files
 * side by side, and what the caller may do to it (./change-actions.tsx). The diff is read again
 * whenever the head moves.
 */
export function ChangeRequestView() {
  const { params } = useRoute();
  const me = useContext(SessionContext);
  const installId = params['id'];
  const crId = params['cr'];
  const members = useMembers();
  const install = useLoad(() => api.GET('/v1/installs/{id}', { params: { path: { id: installId } } }), [installId, me?.workspace?.id]);
  const change = useLoad(() => api.GET('/v1/repository_change_requests/{id}', { params: { path: { id: crId } } }), [crId]);
  const cr = change.data;
  const required = install.data?.required_approvals;
  return (
    <section aria-labelledby="change-title">
      <p class="crumbs">
        <a href="/console/installs">Installs</a> / {install.data ? <a href={`/console/installs/${installId}`}>{install.data.name}</a> : '…'} /{' '}
        <a href={`/console/installs/${installId}/changes`}>Changes</a> /
      </p>
      <Loaded load={change} what="the change request">
        {() => (
          <>
            <PageHead title={`#${cr!.number} ${cr!.title}`} id="change-title" />
            <InstallTabs id={installId} current="changes" open={Boolean(install.data?.open_change_request_id)} />
            <p>
              <Badge value={cr!.state} /> <span class="standing">{standing(cr!, required)}</span>
            </p>
            {/* Keyed by the change request: what was said about one is not shown on the next one opened. */}
            <ChangeRequestActions key={cr!.id} cr={cr!} required={required} reload={() => Promise.all([change.reload(), install.reload()])} />
            {/* A superseded (or ended) one points to the change request that waits now, if any. */}
            {install.data && install.data.open_change_request_id !== cr!.id && <WaitingChange install={install.data} />}
            {cr!.description ? <p class="description">{cr!.description}</p> : <p class="muted">No description.</p>}
            <dl class="facts">
              <dt>Author</dt>
              <dd>
                {nameOf(members.byId, cr!.author_id)}
                {cr!.author_id === null && ' (an automatic update)'}, <Time at={cr!.created_at} />
              </dd>
              <dt>Base</dt>
              <dd>
                <code title={cr!.base_commit_sha}>{short(cr!.base_commit_sha)}</code> <span class="muted">(main when it was built)</span>
              </dd>
              <dt>Head</dt>
              <dd>
                <code title={cr!.head_commit_sha}>{short(cr!.head_commit_sha)}</code>
              </dd>
              <dt>Ref</dt>
              <dd>
                <code>{cr!.ref}</code>
                <p class="hint">
                  From a clone of the install's repository: <code>{`git fetch origin ${cr!.ref} && git diff main FETCH_HEAD`}</code>{' '}
                  <CopyButton value={`git fetch origin ${cr!.ref} && git diff main FETCH_HEAD`} label="Copy the command" />
                </p>
              </dd>
              <dt>Approvals</dt>
              <dd>
                {cr!.approvals.length === 0 ? (
                  'none yet'
                ) : (
                  <ul class="approvals">
                    {cr!.approvals.map((a) => (
                      <li key={a.user_id}>
                        {nameOf(members.byId, a.user_id)}
                        {a.user_id === me?.user?.id && ' (you)'}, <Time at={a.approved_at} />
                      </li>
                    ))}
                  </ul>
                )}
                {typeof required === 'number' && <span class="muted"> {required === 0 ? 'No approval is required.' : `${plural(required, 'approval')} required.`}</span>}
              </dd>
              <dt>Files</dt>
              <dd>
                {cr!.diff_stats.added} added, {cr!.diff_stats.modified} modified, {cr!.diff_stats.removed} removed
              </dd>
              {cr!.state === 'merged' && (
                <>
                  <dt>Merged</dt>
                  <dd>
                    by {nameOf(members.byId, cr!.merged_by)}, <Time at={cr!.merged_at} />
                  </dd>
                </>
              )}
              {cr!.state === 'closed' && (
                <>
                  <dt>Closed</dt>
                  <dd>
                    <Time at={cr!.closed_at} />
                  </dd>
                </>
              )}
            </dl>
            <h2 id="diff-title">What it changes</h2>
            <Diff id={cr!.id} head={cr!.head_commit_sha} />
          </>
        )}
      </Loaded>
    </section>
  );
}
