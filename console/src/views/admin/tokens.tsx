import { useContext, useState } from 'preact/hooks';
import type { Schemas } from '@workspace-platform/sdk';
import { api, messageOf } from '../../api.js';
import { SessionContext } from '../../session.js';
import { nameOf, useMembers } from '../../members.js';
import { ConfirmButton, Field, FormError, inputProps, Loaded, PageHead, ShownOnce, Table, Time } from '../../components.js';
import { fieldErrors } from '../../format.js';
import { useAction, useLoad } from '../../hooks.js';
import { TOKEN_SCOPES, type TokenScope } from '../../../../src/auth/scope-schemas.js';

const EXPIRIES = { never: 0, '7 days': 7, '30 days': 30, '90 days': 90, '1 year': 365 } as const;

/** The workspace's API tokens; a new one's plaintext is shown once, with a copy button. */
export function TokensView() {
  const me = useContext(SessionContext);
  const members = useMembers();
  const load = useLoad(() => api.GET('/v1/api_tokens', { params: { query: { limit: 100 } } }), [me?.workspace?.id]);
  const create = useAction();
  const revoke = useAction();
  const [name, setName] = useState('');
  const [all, setAll] = useState(true);
  const [scopes, setScopes] = useState<TokenScope[]>([]);
  const [expiry, setExpiry] = useState<keyof typeof EXPIRIES>('90 days');
  const [made, setMade] = useState<Schemas['CreatedToken'] | null>(null);
  const errors = fieldErrors(create.error);
  const submit = async (e: Event) => {
    e.preventDefault();
    const days = EXPIRIES[expiry];
    const body = { name, ...(all ? {} : { scopes }), ...(days ? { expires_at: Math.floor(Date.now() / 1000) + days * 86_400 } : {}) };
    const res = await create.run(() => api.POST('/v1/api_tokens', { body }));
    if (res.ok) {
      setMade(res.data ?? null);
      setName('');
    }
    await load.reload();
  };
  return (
    <section aria-labelledby="tokens-title">
      <PageHead title="API tokens" id="tokens-title" />
      {made && (
        <ShownOnce value={made.token} label="The new token" copyLabel="Copy token" onDone={() => setMade(null)}>
          The token <strong>{made.name}</strong>. Copy it now: it is not shown again.
        </ShownOnce>
      )}
      {revoke.error ? (
        <p role="alert" class="error">
          {messageOf(revoke.error)}
        </p>
      ) : null}
      <Loaded load={load} what="tokens">
        {(page) => {
          const rows = page.data;
          if (rows.length === 0) return <p class="empty">No API tokens. Make one below for a script, a CI job or an integration.</p>;
          return (
            <Table
              label="API tokens"
              rows={rows}
              rowKey={(t) => t.id}
              columns={[
                {
                  header: 'Name',
                  cell: (t) => (
                    <>
                      {t.name} <code class="muted">{t.prefix}…</code>
                    </>
                  ),
                },
                { header: 'Scopes', cell: (t) => (t.scopes.length === TOKEN_SCOPES.length ? 'all' : t.scopes.join(', ') || 'none') },
                { header: 'Made by', cell: (t) => nameOf(members.byId, t.created_by) },
                { header: 'Last used', cell: (t) => <Time at={t.last_used_at} /> },
                { header: 'Expires', cell: (t) => (t.expires_at === null ? 'never' : <Time at={t.expires_at} />) },
                {
                  header: 'Actions',
                  quiet: true,
                  cell: (t) => (
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
                  ),
                },
              ]}
            />
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
              <option key={k} value={k}>
                {k === 'never' ? 'Never' : `In ${k}`}
              </option>
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
              {TOKEN_SCOPES.map((s) => (
                <label class="inline" key={s}>
                  <input type="checkbox" checked={scopes.includes(s)} onChange={(e) => setScopes((now) => ((e.target as HTMLInputElement).checked ? [...now, s] : now.filter((x) => x !== s)))} /> {s}
                </label>
              ))}
            </div>
          )}
          {errors['scopes'] && <p class="field-error">{errors['scopes']}</p>}
        </fieldset>
        <FormError error={create.error} fields={['name', 'scopes', 'expires_at']} />
        <div class="actions">
          <button type="submit" disabled={create.busy}>
            Create token
          </button>
        </div>
      </form>
    </section>
  );
}
