import { useContext, useEffect, useRef, useState } from 'preact/hooks';
import type { ErrorEnvelope } from '@workspace-platform/sdk';
import { api, messageOf } from '../../api.js';
import { explainConflict, ifMatch } from '../../conflict.js';
import { Allowed, ConfirmButton, Field, inputProps } from '../../components.js';
import { fieldErrors, oneOf } from '../../format.js';
import { focusAndShow, useAction } from '../../hooks.js';
import { can, SessionContext } from '../../session.js';
import { blockersInWords, type ChangeRequest } from './changes.js';

type Action = 'approve' | 'merge' | 'close' | 'reopen' | 'edit';

const WORDS: Record<Action, string> = { approve: 'approval', merge: 'merge', close: 'close', reopen: 'reopen', edit: 'edit' };
const BLOCKERS = ['approvals_required', 'not_open'] as const;
const short = (sha: string | undefined) => (sha ?? '').slice(0, 10);

/** What happened when the page's version of the change request was stale (7030): told from what the page reloaded. */
function staleInWords(error: unknown, action: Action, seen: ChangeRequest, now: ChangeRequest): string {
  const what = WORDS[action];
  if (now.id === seen.id && now.etag !== seen.etag) {
    if (now.state === 'superseded' && seen.state !== 'superseded') return `A newer render superseded this change after you opened it, so the ${what} was not done.`;
    if (now.state !== seen.state)
      return `Someone ${now.state === 'open' ? 'reopened' : now.state} this change request after you opened it, so the ${what} was not done. The page now shows it as it is.`;
    if (now.head_commit_sha !== seen.head_commit_sha)
      return `The head moved after you opened it (main moved, and the change was rebuilt on it: now ${short(now.head_commit_sha)}), so the ${what} was not done. The page has reloaded it: look over the diff and try again.`;
    if (now.approvals.length !== seen.approvals.length) return `Someone approved it after you opened it, so the ${what} was not done. The page now shows it as it is: try again.`;
  }
  return explainConflict(error, 'change request', what) ?? messageOf(error);
}

/**
 * A refused write on a change request, in words: what blocked a merge, a newer render that
 * superseded it, a head that moved, an author approving their own change. `now` is the change
 * request as the page reloaded it after the refusal.
 */
export function explainChangeError(error: unknown, action: Action, seen: ChangeRequest, now: ChangeRequest, required: number | null | undefined): string {
  const entry = (error as Partial<ErrorEnvelope> | null)?.errors?.[0];
  const meta = entry?.metadata ?? {};
  const what = WORDS[action];
  switch (entry?.code) {
    case 7030:
      return staleInWords(error, action, seen, now);
    case 7331: {
      const codes = (meta['merge_blockers'] ?? '').split(',').flatMap((b) => oneOf(BLOCKERS, b) ?? []);
      return `The merge was refused (${blockersInWords(now, required, codes).join('; ') || 'not mergeable'}), so main did not move. The page now shows the change request as it is.`;
    }
    case 7332:
      return `The head moved since you reviewed it (main moved, and the change was rebuilt on it: now ${short(meta['head_commit_sha'])}), so nothing was merged. The page has reloaded it: look over the diff and merge again.`;
    case 7336:
      return 'Main moved while the merge was checked, so nothing was merged. The page has reloaded the change rebuilt on the new main: look it over and merge again.';
    case 7330:
      return meta['state'] === 'superseded' ? `A newer render superseded this change, so the ${what} was not done.` : `It is ${meta['state'] ?? now.state} now, not open, so the ${what} was not done.`;
    case 7333:
      return 'You opened this change, so you cannot approve it: another member must.';
    case 7334:
      return 'A newer render of the install exists, so this change request cannot be reopened: merging it would undo that render.';
    case 7335:
      return `Only a closed change request can be reopened; this one is ${meta['state'] ?? now.state}.`;
    default:
      return messageOf(error);
  }
}

const DONE: Record<Action, (cr: ChangeRequest) => string> = {
  approve: () => 'You approved it.',
  merge: (cr) => `Merged: main is at ${short(cr.head_commit_sha)} now.`,
  close: () => 'Closed: its render is canceled and main stays where it was.',
  reopen: () => 'Reopened: it waits for review again.',
  edit: () => 'Saved.',
};

/** The title and description, edited in place by whoever may write (PATCH, If-Match). */
function EditChange({ cr, onSave, onCancel }: { cr: ChangeRequest; onSave: (body: { title?: string; description?: string }) => Promise<{ ok: boolean; error: unknown }>; onCancel: () => void }) {
  const [title, setTitle] = useState(cr.title);
  const [description, setDescription] = useState(cr.description);
  const save = useAction();
  const errors = fieldErrors(save.error);
  return (
    <form
      class="card form"
      aria-label="Edit the change request"
      noValidate
      onSubmit={async (e) => {
        e.preventDefault();
        await save.run(async () => {
          const body = { ...(title !== cr.title ? { title } : {}), ...(description !== cr.description ? { description } : {}) };
          const res = await onSave(body);
          return res.ok ? { data: true } : { error: res.error };
        });
      }}
    >
      <Field label="Title" name="change-title-input" error={errors['title']}>
        <input {...inputProps('change-title-input', errors['title'])} value={title} maxLength={200} onInput={(e) => setTitle((e.target as HTMLInputElement).value)} />
      </Field>
      <Field label="Description" name="change-description" error={errors['description']}>
        <textarea {...inputProps('change-description', errors['description'])} rows={5} value={description} onInput={(e) => setDescription((e.target as HTMLTextAreaElement).value)} />
      </Field>
      <div class="actions">
        <button type="submit" disabled={save.busy || title.trim() === '' || (title === cr.title && description === cr.description)}>
          Save
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/**
 * What the caller may do to a change request, each write sending the etag the page shows
 * (If-Match) and the page reloading its version after it, done or refused: Approve (a member
 * with the permission, never the author, who is told why), Merge (while nothing blocks it, with
 * the head the person reviewed), Close, Reopen, and editing the title and description.
 */
export function ChangeRequestActions({ cr, required, reload }: { cr: ChangeRequest; required: number | null | undefined; reload: () => Promise<unknown> }) {
  const me = useContext(SessionContext);
  const act = useAction();
  const [outcome, setOutcome] = useState<{ action: Action; seen: ChangeRequest; error: unknown } | null>(null);
  const [editing, setEditing] = useState(false);
  const alert = useRef<HTMLParagraphElement>(null);
  // A refusal is read where the eye is: once the words are on the page (after the reload they are drawn from).
  useEffect(() => {
    if (outcome?.error && alert.current) focusAndShow(alert.current);
  }, [outcome]);
  const run = async (action: Action, write: () => Promise<{ data?: unknown; error?: unknown }>) => {
    const seen = cr;
    const res = await act.run(write);
    // Done or refused, the page shows the change request as it is now; a refusal is told from that.
    await reload();
    setOutcome({ action, seen, error: res.ok ? null : res.error });
    return res;
  };
  const id = cr.id;
  const header = ifMatch(cr.etag);
  const writer = can(me, 'write');
  const isAuthor = cr.author_id !== null && cr.author_id === me?.user?.id;
  const approved = cr.approvals.some((a) => a.user_id === me?.user?.id);
  const open = cr.state === 'open';
  const message = outcome && (outcome.error ? explainChangeError(outcome.error, outcome.action, outcome.seen, cr, required) : DONE[outcome.action](outcome.seen));
  return (
    <>
      <div class="actions change-actions">
        {open && (
          <Allowed to="repository_change_requests.approve">
            {isAuthor ? (
              <>
                <button type="button" disabled aria-describedby="approve-why">
                  Approve
                </button>
                <span class="hint" id="approve-why">
                  You opened this change, so you cannot approve it: another member must.
                </span>
              </>
            ) : approved ? (
              <span class="muted">You approved it.</span>
            ) : (
              <button type="button" disabled={act.busy} onClick={() => void run('approve', () => api.POST('/v1/repository_change_requests/{id}:approve', { params: { path: { id }, header } }))}>
                Approve
              </button>
            )}
          </Allowed>
        )}
        {open && writer && (
          <>
            <ConfirmButton
              label="Merge"
              title={`Merge change request #${cr.number}?`}
              confirmLabel="Merge into main"
              disabled={!cr.mergeable || act.busy}
              body={
                <p>
                  The install's main moves from <code>{short(cr.base_commit_sha)}</code> to <code>{short(cr.head_commit_sha)}</code>: its files become this change's. Nothing in main's history is
                  rewritten.
                </p>
              }
              onConfirm={() => run('merge', () => api.POST('/v1/repository_change_requests/{id}:merge', { params: { path: { id }, header }, body: { head_commit_sha: cr.head_commit_sha } }))}
            />
            {!cr.mergeable && (
              <span class="hint" id="merge-why">
                Merging waits: {blockersInWords(cr, required).join(', ')}.
              </span>
            )}
            <ConfirmButton
              label="Close"
              title={`Close change request #${cr.number} without merging?`}
              confirmLabel="Close without merging"
              disabled={act.busy}
              body={<p>Its render is canceled and main stays where it is. It can be reopened while no newer render of the install exists.</p>}
              onConfirm={() => run('close', () => api.POST('/v1/repository_change_requests/{id}:close', { params: { path: { id }, header } }))}
            />
          </>
        )}
        {cr.state === 'closed' && writer && (
          <button
            type="button"
            class="secondary"
            disabled={act.busy}
            onClick={() => void run('reopen', () => api.POST('/v1/repository_change_requests/{id}:reopen', { params: { path: { id }, header } }))}
          >
            Reopen
          </button>
        )}
        {writer && !editing && (
          <button type="button" class="secondary" onClick={() => setEditing(true)}>
            Edit title and description
          </button>
        )}
      </div>
      {message &&
        (outcome.error ? (
          <p role="alert" class="error" ref={alert}>
            {message}
          </p>
        ) : (
          <p role="status" class="done">
            {message}
          </p>
        ))}
      {editing && (
        // Not keyed by the etag: after a refused save (someone else's edit) the person's words stay, to save again on the version now shown.
        <EditChange
          cr={cr}
          onCancel={() => setEditing(false)}
          onSave={async (body) => {
            const res = await run('edit', () => api.PATCH('/v1/repository_change_requests/{id}', { params: { path: { id }, header }, body }));
            if (res.ok) setEditing(false);
            return res;
          }}
        />
      )}
    </>
  );
}
