import { useContext, useState } from 'preact/hooks';
import { api, messageOf } from '../../api.js';
import { SessionContext } from '../../session.js';
import { nameOf, useMembers } from '../../members.js';
import { ConfirmButton, CopyButton, Field, FormError, fieldErrors, inputProps, Loaded, PageHead, Time, useAction, useLoad } from '../../ui.js';

const SCOPES = [
  'dashboards:read',
  'dashboards:write',
  'secrets:read',
  'secrets:write',
  'secrets:access',
  'installs:read',
  'installs:write',
  'compute:read',
  'compute:write',
  'tokens:read',
  'audit:read',
  'webhooks:read',
  'webhooks:write',
] as const;
const EXPIRIES = { never: 0, '7 days': 7, '30 days': 30, '90 days': 90, '1 year': 365 } as const;
type Token = { id: string; name: string; prefix: string; expires_at: number | null; created_at: number; created_by: string; last_used_at: number | null; scopes: string[] };

/** The workspace's API tokens; a new one's plaintext is shown once, with a copy button. */
export function TokensView() {
  const me = useContext(SessionContext);
  const members = useMembers();
  const load = useLoad(() => api.GET('/v1/api_tokens', { params: { query: { limit: 100 } } }), [me?.workspace?.id]);
  const create = useAction();
  const revoke = useAction();
  const [name, setName] = useState('');
  const [all, setAll] = useState(true);
  const [scopes, setScopes] = useState<string[]>([]);
  const [expiry, setExpiry] = useState<keyof typeof EXPIRIES>('90 days');
  const [made, setMade] = useState<{ name: string; token: string } | null>(null);
  const errors = fieldErrors(create.error);
  const submit = async (e: Event) => {
    e.preventDefault();
    const days = EXPIRIES[expiry];
    const body = { name, ...(all ? {} : { scopes }), ...(days ? { expires_at: Math.floor(Date.now() / 1000) + days * 86_400 } : {}) };
    const res = await create.run(() => api.POST('/v1/api_tokens', { body } as never));
    if (res.ok) {
      setMade(res.data as { name: string; token: string });
      setName('');
    }
    await load.reload();
  };
  return (
    <section aria-labelledby="tokens-title">
      <PageHead title="API tokens" id="tokens-title" />
      {made && (
        <div class="card" role="status">
          <p>
            The token <strong>{made.name}</strong>. Copy it now: it is not shown again.
          </p>
          <p class="secret-value" aria-label="The new token">{made.token}</p>
          <div class="actions">
            <CopyButton value={made.token} label="Copy token" />
            <button type="button" class="secondary" onClick={() => setMade(null)}>Done</button>
          </div>
        </div>
      )}
      {revoke.error ? <p role="alert" class="error">{messageOf(revoke.error)}</p> : null}
      <Loaded load={load} what="tokens">
        {(page) => {
          const rows = (page as { data: Token[] }).data;
          if (rows.length === 0) return <p class="empty">No API tokens. Make one below for a script, a CI job or an integration.</p>;
          return (
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Scopes</th>
                    <th scope="col">Made by</th>
                    <th scope="col">Last used</th>
                    <th scope="col">Expires</th>
                    <th scope="col"><span class="visually-hidden">Actions</span></th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((t) => (
                    <tr key={t.id}>
                      <td>
                        {t.name} <code class="muted">{t.prefix}…</code>
                      </td>
                      <td>{t.scopes.length === SCOPES.length ? 'all' : t.scopes.join(', ') || 'none'}</td>
                      <td>{nameOf(members.byId, t.created_by)}</td>
                      <td><Time at={t.last_used_at} /></td>
                      <td>{t.expires_at === null ? 'never' : <Time at={t.expires_at} />}</td>
                      <td>
                        <ConfirmButton
                          label="Revoke"
                          title={`Revoke ${t.name}?`}
                          danger
                          body={<p>Its next request is refused, on every server. This cannot be undone.</p>}
                          onConfirm={async () => {
                            await revoke.run(() => api.DELETE('/v1/api_tokens/{id}', { params: { path: { id: t.id } } }));
                            await load.reload();
                          }}
                        />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          );
        }}
      </Loaded>
      <form class="card form" onSubmit={submit} aria-labelledby="new-token" noValidate>
        <h2 id="new-token">New token</h2>
        <Field label="Name" name="token-name" error={errors['name']}>
          <input {...inputProps('token-name', errors['name'])} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </Field>
        <Field label="Expires" name="token-expiry" error={errors['expires_at']}>
          <select {...inputProps('token-expiry', errors['expires_at'])} value={expiry} onChange={(e) => setExpiry((e.target as HTMLSelectElement).value as 'never')}>
            {Object.keys(EXPIRIES).map((k) => (
              <option key={k} value={k}>{k === 'never' ? 'Never' : `In ${k}`}</option>
            ))}
          </select>
        </Field>
        <fieldset>
          <legend>Scopes</legend>
          <label class="inline">
            <input type="checkbox" checked={all} onChange={(e) => setAll((e.target as HTMLInputElement).checked)} /> Everything (no scopes)
          </label>
          {!all && (
            <div class="checks">
              {SCOPES.map((s) => (
                <label class="inline" key={s}>
                  <input
                    type="checkbox"
                    checked={scopes.includes(s)}
                    onChange={(e) => setScopes((now) => ((e.target as HTMLInputElement).checked ? [...now, s] : now.filter((x) => x !== s)))}
                  />{' '}
                  {s}
                </label>
              ))}
            </div>
          )}
          {errors['scopes'] && <p class="field-error">{errors['scopes']}</p>}
        </fieldset>
        <FormError error={create.error} fields={['name', 'scopes', 'expires_at']} />
        <div class="actions">
          <button type="submit" disabled={create.busy}>Create token</button>
        </div>
      </form>
    </section>
  );
}
