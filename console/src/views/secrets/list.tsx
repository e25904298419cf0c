import { useContext, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../../api.js';
import { can, SessionContext } from '../../session.js';
import { Allowed, Field, FormError, inputProps, Loaded, PageHead, Table, Time } from '../../components.js';
import { fieldErrors } from '../../format.js';
import { useAction, useLoad } from '../../hooks.js';

/** The workspace's secrets, newest first, and a new one by name. */
export function SecretsView() {
  const me = useContext(SessionContext);
  const { route } = useLocation();
  const load = useLoad(() => api.GET('/v1/secrets', { params: { query: { limit: 100 } } }), [me?.workspace?.id]);
  const [name, setName] = useState('');
  const create = useAction();
  const errors = fieldErrors(create.error);
  const submit = async (e: Event) => {
    e.preventDefault();
    const res = await create.run(() => api.POST('/v1/secrets', { body: { name } }));
    if (res.data) route(`/console/secrets/${res.data.id}`);
  };
  return (
    <section aria-labelledby="secrets-title">
      <PageHead title="Secrets" id="secrets-title" />
      <Loaded load={load} what="secrets">
        {(page) => {
          const rows = page.data;
          return rows.length === 0 ? (
            <p class="empty">{can(me, 'write') ? 'No secrets yet. Name one below, then add its first version: its value is encrypted at rest and never shown unless asked for.' : 'No secrets yet.'}</p>
          ) : (
            <Table
              label="Secrets"
              rows={rows}
              rowKey={(s) => s.id}
              columns={[
                { header: 'Name', cell: (s) => <a href={`/console/secrets/${s.id}`}>{s.name}</a> },
                { header: 'Created', cell: (s) => <Time at={s.created_at} /> },
                { header: 'Changed', cell: (s) => <Time at={s.updated_at} /> },
              ]}
            />
          );
        }}
      </Loaded>
      <Allowed to="write">
        <form class="card form" onSubmit={submit} aria-labelledby="new-secret" noValidate>
          <h2 id="new-secret">New secret</h2>
          <Field label="Name" name="secret-name" error={errors['name']} hint="Unique in the workspace, such as DATABASE_URL">
            <input {...inputProps('secret-name', errors['name'])} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          </Field>
          <FormError error={create.error} fields={['name']} />
          <div class="actions">
            <button type="submit" disabled={create.busy}>
              Create secret
            </button>
          </div>
        </form>
      </Allowed>
    </section>
  );
}
