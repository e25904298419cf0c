/**
 * Repository change requests in the console (docs/spec-gaps.md, "Repository change requests"):
 * an install's Changes tab, a change request's page with its side-by-side diff, and the words
 * the install page and both of these use for a change request's state and what blocks its merge.
 */
import { useContext } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import type { Install, Schemas } from '@workspace-platform/sdk';
import { api, messageOf } from '../../api.js';
import { Badge, Loaded, PageHead, Time } from '../../components.js';
import { oneOf } from '../../format.js';
import { useLoad, usePaged } from '../../hooks.js';
import { nameOf, useMembers } from '../../members.js';
import { SessionContext } from '../../session.js';

export type ChangeRequest = Schemas['RepositoryChangeRequest'];

const STATES = ['open', 'merged', 'closed', 'superseded'] as const;

/** A change request that is not open, in the words a merge blocker takes. */
const NOT_OPEN: Record<ChangeRequest['state'], string> = {
  open: 'not open',
  merged: 'merged already',
  closed: 'closed',
  superseded: 'superseded by a newer render',
};

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * What keeps a change request from being merged, in words ("needs 1 more approval", "closed"):
 * one per `merge_blockers` entry. `required` is the install's `required_approvals` when known.
 */
export function blockersInWords(cr: Pick<ChangeRequest, 'merge_blockers' | 'state' | 'approvals'>, required: number | null | undefined, blockers = cr.merge_blockers): string[] {
  return blockers.map((b) => {
    if (b === 'not_open') return NOT_OPEN[cr.state];
    if (typeof required !== 'number') return 'needs more approvals';
    return `needs ${plural(Math.max(1, required - cr.approvals.length), 'more approval')}`;
  });
}

/** Where a change request stands, in a few words: ready, what blocks it, or how it ended. */
export function standing(cr: ChangeRequest, required: number | null | undefined): string {
  if (cr.state === 'merged') return 'merged into main';
  if (cr.state === 'superseded') return 'superseded by a newer render';
  if (cr.mergeable) return 'ready to merge';
  return blockersInWords(cr, required).join(', ');
}

export const changeHref = (installId: string, crId: string) => `/console/installs/${installId}/changes/${crId}`;

/** The install's pages, each linking the others: its overview and its change requests. */
export function InstallTabs({ id, current, open }: { id: string; current: 'overview' | 'changes'; open?: boolean }) {
  return (
    <nav aria-label="Install" class="inline-form tabs">
      <a href={`/console/installs/${id}`} aria-current={current === 'overview' ? 'page' : undefined}>
        Overview
      </a>
      <a href={`/console/installs/${id}/changes`} aria-current={current === 'changes' ? 'page' : undefined}>
        Changes{open ? ' (1 open)' : ''}
      </a>
    </nav>
  );
}

/** The install page's line when a change waits for review: which one, and what it waits for. */
export function WaitingChange({ install }: { install: Install }) {
  return install.open_change_request_id ? <Waiting install={install} crId={install.open_change_request_id} /> : null;
}

function Waiting({ install, crId }: { install: Install; crId: string }) {
  const load = useLoad(() => api.GET('/v1/repository_change_requests/{id}', { params: { path: { id: crId } } }), [crId, install.etag]);
  const cr = load.data;
  return (
    <p class="notice" role="status">
      A change waits for review before it reaches main: <a href={changeHref(install.id, crId)}>{cr ? `change request #${cr.number}: ${cr.title}` : 'its change request'}</a>
      {cr && <> ({standing(cr, install.required_approvals)})</>}.
    </p>
  );
}

/** An install's change requests, newest first, page by page; the state to show is in the address. */
export function ChangesView() {
  const { params } = useRoute();
  const { query, route } = useLocation();
  const me = useContext(SessionContext);
  const id = params['id'];
  const state = oneOf(STATES, query['state']);
  const members = useMembers();
  const install = useLoad(() => api.GET('/v1/installs/{id}', { params: { path: { id } } }), [id, me?.workspace?.id]);
  const list = usePaged(
    (cursor) => api.GET('/v1/repository_change_requests', { params: { query: { install_id: id, limit: 20, ...(state ? { state } : {}), ...(cursor ? { cursor } : {}) } } }),
    [id, state],
  );
  const required = install.data?.required_approvals;
  return (
    <section aria-labelledby="changes-title">
      <p class="crumbs">
        <a href="/console/installs">Installs</a> / {install.data ? <a href={`/console/installs/${id}`}>{install.data.name}</a> : '…'} /
      </p>
      <PageHead title="Changes" id="changes-title" />
      <InstallTabs id={id} current="changes" open={Boolean(install.data?.open_change_request_id)} />
      {install.data && (
        <p class="muted">
          {install.data.delivery === 'change_request'
            ? `Each render of this install waits here for review before it reaches main (${plural(install.data.required_approvals, 'approval')} required).`
            : 'This install renders straight to main: change requests open only when its delivery is set to review changes.'}
        </p>
      )}
      <form class="inline-form" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          State
          <select value={state ?? ''} onChange={(e) => route(`/console/installs/${id}/changes${(e.target as HTMLSelectElement).value ? `?state=${(e.target as HTMLSelectElement).value}` : ''}`)}>
            <option value="">Any</option>
            {STATES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      </form>
      <Loaded load={list.load} what="change requests">
        {() => (
          <>
            {list.rows!.length === 0 ? (
              <p class="empty">{state ? `No ${state} change requests.` : 'No change requests yet.'}</p>
            ) : (
              <ol class="rows" aria-label="Change requests">
                {list.rows!.map((cr) => (
                  <li key={cr.id}>
                    <span>
                      <a href={changeHref(id, cr.id)}>
                        #{cr.number} {cr.title}
                      </a>{' '}
                      <span class="muted">
                        opened <Time at={cr.created_at} /> by {nameOf(members.byId, cr.author_id)} · {cr.diff_stats.added} added, {cr.diff_stats.modified} modified, {cr.diff_stats.removed} removed
                      </span>
                    </span>
                    <span>
                      <Badge value={cr.state} /> <span class="standing">{standing(cr, required)}</span>
                    </span>
                  </li>
                ))}
              </ol>
            )}
            {list.moreError ? (
              <p role="alert" class="error">
                {messageOf(list.moreError)}
              </p>
            ) : null}
            {list.hasMore && (
              <div class="actions">
                <button type="button" class="secondary" onClick={() => void list.more()}>
                  Older change requests
                </button>
              </div>
            )}
          </>
        )}
      </Loaded>
    </section>
  );
}
