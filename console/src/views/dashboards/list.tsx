import { useContext, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import type { Dashboard } from '@workspace-platform/sdk';
import { api } from '../../api.js';
import { ifMatch } from '../../conflict.js';
import { can, SessionContext } from '../../session.js';
import { Field, FormError, inputProps, Loaded, PageHead, Table, Time } from '../../components.js';
import { fieldErrors, oneOf } from '../../format.js';
import { useAction, useLoad } from '../../hooks.js';

const PURPOSES: readonly Dashboard['purpose'][] = ['custom', 'workspace_overview'];

/** The workspace's dashboards, newest first, and a new one from a name. */
export function DashboardsView() {
  const me = useContext(SessionContext);
  const { route } = useLocation();
  const load = useLoad(() => api.GET('/v1/dashboards', { params: { query: { limit: 100 } } }), [me?.workspace?.id]);
  const [name, setName] = useState('');
  const [purpose, setPurpose] = useState<Dashboard['purpose']>('custom');
  const create = useAction();
  const errors = fieldErrors(create.error);
  const submit = async (e: Event) => {
    e.preventDefault();
    const res = await create.run(async () => {
      const made = await api.POST('/v1/dashboards', { body: { name, purpose, filter_definitions: [], default_filter_values: {}, widgets: [] } });
      if (!made.data || purpose !== 'workspace_overview') return made;
      // A workspace overview starts with its built-in layout, not empty behind a red Reset. Were
      // the reset refused, the dashboard exists all the same, and its page offers Reset.
      await api.POST('/v1/dashboards/{id}:reset', { params: { path: { id: made.data.id }, header: ifMatch(made.data.etag) }, body: { summary: 'the built-in layout, on creation' } });
      return made;
    });
    if (res.data) route(`/console/dashboards/${res.data.id}`);
  };
  return (
    <section aria-labelledby="dashboards-title">
      <PageHead title={`Dashboards${me?.workspace ? ` in ${me.workspace.name}` : ''}`} id="dashboards-title" />
      <Loaded load={load} what="dashboards">
        {(page) => {
          const rows = page.data;
          return rows.length === 0 ? (
            <p class="empty">
              {can(me, 'write')
                ? 'No dashboards yet. Make one below: a custom one starts empty and you add platform metrics or snippets to it; a workspace overview starts with the built-in layout.'
                : 'No dashboards yet.'}
            </p>
          ) : (
            <Table
              label="Dashboards"
              rows={rows}
              rowKey={(d) => d.id}
              columns={[
                { header: 'Name', cell: (d) => <a href={`/console/dashboards/${d.id}`}>{d.name}</a> },
                { header: 'Purpose', cell: (d) => d.purpose.replace('_', ' ') },
                { header: 'Widgets', cell: (d) => d.widgets.length },
                { header: 'Layout changed', cell: (d) => <Time at={d.updated_at} /> },
              ]}
            />
          );
        }}
      </Loaded>
      {can(me, 'write') && (
        <form class="card form" onSubmit={submit} aria-labelledby="new-dashboard" noValidate>
          <h2 id="new-dashboard">New dashboard</h2>
          <Field label="Name" name="new-name" error={errors['name']}>
            <input {...inputProps('new-name', errors['name'])} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          </Field>
          <Field label="Purpose" name="new-purpose" error={errors['purpose']}>
            <select {...inputProps('new-purpose', errors['purpose'])} value={purpose} onChange={(e) => setPurpose(oneOf(PURPOSES, (e.target as HTMLSelectElement).value) ?? 'custom')}>
              <option value="custom">Custom</option>
              <option value="workspace_overview">Workspace overview</option>
            </select>
          </Field>
          <FormError error={create.error} fields={['name', 'purpose']} />
          <div class="actions">
            <button type="submit" disabled={create.busy}>
              Create dashboard
            </button>
          </div>
        </form>
      )}
    </section>
  );
}
