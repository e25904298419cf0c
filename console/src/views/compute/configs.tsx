import { useContext, useState } from 'preact/hooks';
import type { operations } from '@workspace-platform/sdk';
import { api, messageOf } from '../../api.js';
import { ifMatch } from '../../conflict.js';
import { can, SessionContext } from '../../session.js';
import { Allowed, ConfirmButton, Field, FormError, inputProps, Loaded, PageHead, Table, Time } from '../../components.js';
import { fieldErrors } from '../../format.js';
import { useAction, useLoad } from '../../hooks.js';

type NewConfig = operations['createComputeConfig']['requestBody']['content']['application/json'];

export const euros = (cents: number) => `€${(cents / 100).toFixed(2)}`;

/** Compute configs, and a new one whose region and image are chosen from the provider's catalog. */
export function ComputeView() {
  const me = useContext(SessionContext);
  const catalog = useLoad(() => api.GET('/v1/compute/catalog', {}), []);
  const configs = useLoad(() => api.GET('/v1/compute/configs', { params: { query: { limit: 100 } } }), [me?.workspace?.id]);
  const create = useAction();
  const remove = useAction();
  const [name, setName] = useState('');
  const [region, setRegion] = useState('');
  const [image, setImage] = useState('');
  const [filter, setFilter] = useState('*');
  const errors = fieldErrors(create.error);
  const c = catalog.data;
  const submit = async (e: Event) => {
    e.preventDefault();
    // The form's button waits for the catalog: its provider, regions and images are the choices.
    if (!c) return;
    const body = {
      name,
      // The server takes its own provider id (WSP_PROVIDER_ID), which its catalog names; the
      // SDK's document was generated with the default, so it types the id as that one literal.
      provider: c.provider as NewConfig['provider'],
      region: region || (c.regions[0]?.id ?? ''),
      image: image || (c.images[0]?.id ?? ''),
      machine_type_filter: filter,
    };
    const res = await create.run(() => api.POST('/v1/compute/configs', { body }));
    if (res.ok) setName('');
    await configs.reload();
  };
  return (
    <section aria-labelledby="compute-title">
      <PageHead title="Compute configs" id="compute-title">
        <a class="button secondary" href="/console/machines">
          Machines
        </a>
      </PageHead>
      {remove.error ? (
        <p role="alert" class="error">
          {messageOf(remove.error)}
        </p>
      ) : null}
      <Loaded load={configs} what="configs">
        {(page) => {
          const rows = page.data;
          if (rows.length === 0) return <p class="empty">No compute configs. A config says where machines run (region) and from what (image){can(me, 'write') ? '; make one below.' : '.'}</p>;
          return (
            <ul class="rows">
              {rows.map((x) => (
                <li key={x.id}>
                  <span>
                    <strong>{x.name}</strong>{' '}
                    <span class="muted">
                      {x.provider} · {x.region} · {x.image} · types {x.machine_type_filter} · made <Time at={x.created_at} />
                    </span>
                  </span>
                  <Allowed to="compute_configs.delete">
                    <ConfirmButton
                      label="Delete"
                      title={`Delete the config ${x.name}?`}
                      danger
                      body={<p>Machines made from it must be deleted first.</p>}
                      onConfirm={async () => {
                        await remove.run(() => api.DELETE('/v1/compute/configs/{id}', { params: { path: { id: x.id }, header: ifMatch(x.etag) } }));
                        await configs.reload();
                      }}
                    />
                  </Allowed>
                </li>
              ))}
            </ul>
          );
        }}
      </Loaded>
      {can(me, 'write') && (
        <form class="card form" onSubmit={submit} aria-labelledby="new-config" noValidate>
          <h2 id="new-config">New config</h2>
          {catalog.error ? (
            <p role="alert" class="error">
              The provider's catalog cannot be read: {messageOf(catalog.error)}
            </p>
          ) : null}
          <Field label="Name" name="config-name" error={errors['name']}>
            <input {...inputProps('config-name', errors['name'])} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          </Field>
          <Field label="Region" name="config-region" error={errors['region']}>
            <select {...inputProps('config-region', errors['region'])} value={region || c?.regions[0]?.id} onChange={(e) => setRegion((e.target as HTMLSelectElement).value)}>
              {c?.regions.map((r) => (
                <option key={r.id} value={r.id}>
                  {r.name} ({r.id})
                </option>
              ))}
            </select>
          </Field>
          <Field label="Image" name="config-image" error={errors['image']}>
            <select {...inputProps('config-image', errors['image'])} value={image || c?.images[0]?.id} onChange={(e) => setImage((e.target as HTMLSelectElement).value)}>
              {c?.images.map((i) => (
                <option key={i.id} value={i.id}>
                  {i.name}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Server types" name="config-filter" error={errors['machine_type_filter']} hint="A glob over the server types below, such as cx*">
            <input {...inputProps('config-filter', errors['machine_type_filter'])} value={filter} onInput={(e) => setFilter((e.target as HTMLInputElement).value)} />
          </Field>
          <FormError error={create.error} fields={['name', 'region', 'image', 'machine_type_filter']} />
          <div class="actions">
            <button type="submit" disabled={create.busy || !c}>
              Create config
            </button>
          </div>
        </form>
      )}
      {c && (
        <>
          <h2 id="types-title">Server types offered</h2>
          <Table
            labelledBy="types-title"
            rows={c.server_types}
            rowKey={(t) => t.id}
            columns={[
              {
                header: 'Type',
                cell: (t) => (
                  <>
                    {t.id} <span class="muted">{t.architecture}</span>
                  </>
                ),
              },
              { header: 'Cores', cell: (t) => t.cores },
              { header: 'Memory', cell: (t) => `${t.memory_gb} GB` },
              { header: 'Disk', cell: (t) => `${t.disk_gb} GB` },
              { header: 'From, a month', cell: (t) => euros(t.monthly_price_cents) },
            ]}
          />
        </>
      )}
    </section>
  );
}
