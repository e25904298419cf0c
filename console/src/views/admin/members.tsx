import { useContext, useState } from 'preact/hooks';
import type { Member } from '@workspace-platform/sdk';
import { api, messageOf } from '../../api.js';
import { can, SessionContext } from '../../session.js';
import { useMembers } from '../../members.js';
import { Allowed, ConfirmButton, Field, FormError, inputProps, Loaded, PageHead, ShownOnce, Table, Time } from '../../components.js';
import { fieldErrors, oneOf } from '../../format.js';
import { useAction, useLoad } from '../../hooks.js';

const ROLES: readonly Member['role'][] = ['owner', 'admin', 'member', 'viewer'];

/**
 * Members and their roles, for everyone in the workspace; for owners and admins, the role
 * selects, Remove, and invitations: pending ones, and new ones with their link shown once.
 */
export function MembersView() {
  const me = useContext(SessionContext);
  const ws = me?.workspace?.id ?? '';
  const members = useMembers();
  const change = useAction();
  const manages = can(me, 'members.manage');

  const setRoleOf = async (m: Member, chosen: string) => {
    const next = oneOf(ROLES, chosen);
    if (!next) return;
    await change.run(() => api.PATCH('/v1/workspaces/{id}/members/{user_id}', { params: { path: { id: ws, user_id: m.user_id } }, body: { role: next } }));
    await members.load.reload();
  };
  return (
    <section aria-labelledby="members-title">
      <PageHead title="Members" id="members-title" />
      {change.error ? (
        <p role="alert" class="error">
          {messageOf(change.error)}
        </p>
      ) : null}
      <Loaded load={members.load} what="members">
        {() => (
          <Table
            label="Members"
            rows={members.list}
            rowKey={(m) => m.user_id}
            columns={[
              {
                header: 'Name',
                cell: (m) => (
                  <>
                    {m.name ?? '—'}
                    {m.user_id === me?.user?.id && <span class="muted"> (you)</span>}
                  </>
                ),
              },
              { header: 'Email', cell: (m) => m.email ?? '—' },
              {
                header: 'Role',
                cell: (m) =>
                  !manages ? (
                    m.role
                  ) : (
                    <select aria-label={`Role of ${m.name ?? m.email ?? m.user_id}`} value={m.role} onChange={(e) => setRoleOf(m, (e.target as HTMLSelectElement).value)}>
                      {ROLES.map((r) => (
                        <option key={r} value={r}>
                          {r}
                        </option>
                      ))}
                    </select>
                  ),
              },
              { header: 'Joined', cell: (m) => <Time at={m.joined_at} /> },
              ...(!manages
                ? []
                : [
                    {
                      header: 'Actions',
                      quiet: true,
                      cell: (m: Member) => (
                        <ConfirmButton
                          label="Remove"
                          title={`Remove ${m.name ?? m.email ?? m.user_id}?`}
                          danger
                          body={<p>They lose access to this workspace at once, on every server. Their API tokens stay until revoked.</p>}
                          onConfirm={async () => {
                            await change.run(() => api.DELETE('/v1/workspaces/{id}/members/{user_id}', { params: { path: { id: ws, user_id: m.user_id } } }));
                            await members.load.reload();
                          }}
                        />
                      ),
                    },
                  ]),
            ]}
          />
        )}
      </Loaded>
      <Allowed to="invitations.read">
        <Invitations ws={ws} />
      </Allowed>
    </section>
  );
}

/** Pending invitations and, for those who may invite, a new one with its link shown once. */
function Invitations({ ws }: { ws: string }) {
  const invitations = useLoad(() => api.GET('/v1/workspaces/{id}/invitations', { params: { path: { id: ws }, query: { limit: 100 } } }), [ws]);
  const change = useAction();
  const invite = useAction();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Member['role']>('member');
  const [link, setLink] = useState<string | null>(null);
  const errors = fieldErrors(invite.error);
  const submit = async (e: Event) => {
    e.preventDefault();
    const res = await invite.run(() => api.POST('/v1/workspaces/{id}/invitations', { params: { path: { id: ws } }, body: { email, role } }));
    if (res.ok) {
      setLink(res.data?.url ?? null);
      setEmail('');
    }
    await invitations.reload();
  };
  return (
    <>
      <h2 id="invitations-title">Invitations</h2>
      {change.error ? (
        <p role="alert" class="error">
          {messageOf(change.error)}
        </p>
      ) : null}
      {link && (
        <ShownOnce value={link} label="Invitation link" copyLabel="Copy link" onDone={() => setLink(null)}>
          Send this link to the person you invited. It is shown only now, and works for seven days.
        </ShownOnce>
      )}
      <Loaded load={invitations} what="invitations">
        {(page) => {
          const rows = page.data;
          if (rows.length === 0) return <p class="empty">No pending invitations. Invite someone by email below.</p>;
          return (
            <ul class="rows" aria-labelledby="invitations-title">
              {rows.map((i) => (
                <li key={i.id}>
                  <span>
                    <strong>{i.email}</strong> as {i.role}{' '}
                    <span class="muted">
                      · expires <Time at={i.expires_at} />
                    </span>
                  </span>
                  <ConfirmButton
                    label="Revoke"
                    title={`Revoke the invitation of ${i.email}?`}
                    body={<p>Its link stops working.</p>}
                    onConfirm={async () => {
                      await change.run(() => api.DELETE('/v1/workspaces/{id}/invitations/{inv}', { params: { path: { id: ws, inv: i.id } } }));
                      await invitations.reload();
                    }}
                  />
                </li>
              ))}
            </ul>
          );
        }}
      </Loaded>
      <Allowed to="invitations.manage">
        <form class="card form" onSubmit={submit} aria-labelledby="invite-title" noValidate>
          <h3 id="invite-title">Invite someone</h3>
          <Field label="Email" name="invite-email" error={errors['email']}>
            <input type="email" {...inputProps('invite-email', errors['email'])} value={email} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} />
          </Field>
          <Field label="Role" name="invite-role" error={errors['role']}>
            <select {...inputProps('invite-role', errors['role'])} value={role} onChange={(e) => setRole(oneOf(ROLES, (e.target as HTMLSelectElement).value) ?? 'member')}>
              {ROLES.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          </Field>
          <FormError error={invite.error} fields={['email', 'role']} />
          <div class="actions">
            <button type="submit" disabled={invite.busy}>
              Invite
            </button>
          </div>
        </form>
      </Allowed>
    </>
  );
}
