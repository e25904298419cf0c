import { useContext, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import type { Machine } from '@workspace-platform/sdk';
import { api, messageOf } from '../../api.js';
import { ifMatch } from '../../conflict.js';
import { OperationProgress } from '../../operation.js';
import { can, SessionContext } from '../../session.js';
import { Allowed, Badge, ConfirmButton, Field, FormError, inputProps, Loaded, PageHead, Time } from '../../components.js';
import { fieldErrors, relative } from '../../format.js';
import { useAction, useLoad } from '../../hooks.js';
import { euros } from './configs.js';

/** A glob as the API reads it (`*`, `?`, sets), for offering only the server types a config allows. */
function globMatch(glob: string, s: string): boolean {
  const re = glob
    .replace(/[.+^${}()|\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.')
    .replace(/\[!/g, '[^');
  return new RegExp(`^${re}$`).test(s);
}

const BUSY = new Set(['creating', 'suspending', 'resuming', 'deleting']);

/** Machines with their state, their suspend / resume / delete; suspensions with the time left before their snapshot is deleted. */
export function MachinesView() {
  const me = useContext(SessionContext);
  const machines = useLoad(() => api.GET('/v1/machines', { params: { query: { limit: 100 } } }), [me?.workspace?.id]);
  const suspensions = useLoad(() => api.GET('/v1/compute/suspensions', {}), [me?.workspace?.id]);
  const configs = useLoad(() => api.GET('/v1/compute/configs', { params: { query: { limit: 100 } } }), [me?.workspace?.id]);
  const catalog = useLoad(() => api.GET('/v1/compute/catalog', {}), []);
  const clusters = useLoad(() => api.GET('/v1/clusters', { params: { query: { limit: 100 } } }), [me?.workspace?.id]);
  const act = useAction();
  const create = useAction();
  const [watching, setWatching] = useState<string | null>(null);
  const [configId, setConfigId] = useState('');
  const [serverType, setServerType] = useState('');
  const [hostname, setHostname] = useState('');
  // A cluster's page links here with the cluster chosen (`?cluster=`).
  const { query } = useLocation();
  const [clusterId, setClusterId] = useState(typeof query['cluster'] === 'string' ? query['cluster'] : '');
  const errors = fieldErrors(create.error);
  const refresh = () => Promise.all([machines.reload(), suspensions.reload(), clusters.reload()]);
  const allConfigs = configs.data?.data ?? [];
  const allClusters = clusters.data?.data ?? [];
  // Until a config is picked, the first of the wanted cluster's region (when one is wanted), else the first.
  const wantedRegion = allClusters.find((c) => c.id === clusterId)?.region;
  const config = allConfigs.find((c) => c.id === configId) ?? allConfigs.find((c) => wantedRegion && c.region === wantedRegion) ?? allConfigs[0];
  const clusterName = (id: string) => allClusters.find((c) => c.id === id)?.name;
  // A machine joins a cluster of its config's region; '' is the default cluster (made on first use), which takes any region.
  const fitting = allClusters.filter((c) => !c.is_default && config && c.region === config.region);
  const chosenCluster = fitting.some((c) => c.id === clusterId) ? clusterId : '';
  const types = (catalog.data?.server_types ?? []).filter((t) => config && globMatch(config.machine_type_filter, t.id) && t.prices.some((p) => p.region === config.region));

  // The type chosen, while the config chosen offers it; else the config's first.
  const chosenType = types.some((t) => t.id === serverType) ? serverType : (types[0]?.id ?? '');
  const act1 = async (m: Machine, action: 'suspend' | 'resume') => {
    const params = { path: { id: m.id }, header: ifMatch(m.etag) };
    const res = await act.run(() => (action === 'suspend' ? api.POST('/v1/machines/{id}:suspend', { params, body: {} }) : api.POST('/v1/machines/{id}:resume', { params })));
    if (res.ok) setWatching(res.data?.operation_id ?? null);
    await refresh();
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    const body = { compute_config_id: config?.id ?? '', server_type: chosenType, ...(hostname ? { hostname } : {}), ...(chosenCluster ? { cluster_id: chosenCluster } : {}) };
    const res = await create.run(() => api.POST('/v1/machines', { body }));
    if (res.ok) {
      setWatching(res.data?.operation_id ?? null);
      setHostname('');
    }
    await refresh();
  };
  return (
    <section aria-labelledby="machines-title">
      <PageHead title="Machines" id="machines-title">
        <a class="button secondary" href="/console/compute">
          Compute configs
        </a>
        <a class="button secondary" href="/console/clusters">
          Clusters
        </a>
      </PageHead>
      {watching && <OperationProgress key={watching} id={watching} onDone={() => void refresh()} />}
      {act.error ? (
        <p role="alert" class="error">
          {messageOf(act.error)}
        </p>
      ) : null}
      <Loaded load={machines} what="machines">
        {(page) => {
          const rows = page.data;
          if (rows.length === 0) return <p class="empty">{can(me, 'write') ? 'No machines. Make one below from a compute config.' : 'No machines.'}</p>;
          return (
            <ul class="rows">
              {rows.map((m) => (
                <li key={m.id}>
                  <span>
                    <strong>{m.hostname}</strong> <Badge value={m.status} />
                    <br />
                    <span class="muted">
                      {m.server_type} in {m.location} · {m.ipv4 ?? 'no address'} · cluster <a href={`/console/clusters/${m.cluster_id}`}>{clusterName(m.cluster_id) ?? m.cluster_id}</a> · made{' '}
                      <Time at={m.created_at} />
                    </span>
                  </span>
                  <div class="actions">
                    <Allowed to="write">
                      {m.status === 'running' && (
                        <button type="button" class="secondary" onClick={() => act1(m, 'suspend')} aria-label={`Suspend ${m.hostname}`}>
                          Suspend
                        </button>
                      )}
                      {m.status === 'suspended' && (
                        <button type="button" class="secondary" onClick={() => act1(m, 'resume')} aria-label={`Resume ${m.hostname}`}>
                          Resume
                        </button>
                      )}
                    </Allowed>
                    <Allowed to="machines.delete">
                      {!BUSY.has(m.status) && (
                        <ConfirmButton
                          label={`Delete ${m.hostname}`}
                          title={`Delete ${m.hostname}?`}
                          danger
                          typeToConfirm={m.hostname}
                          confirmLabel="Delete"
                          body={<p>Its server{m.status === 'suspended' ? ' snapshot' : ''} is deleted at the provider. This cannot be undone.</p>}
                          onConfirm={async () => {
                            const res = await act.run(() => api.DELETE('/v1/machines/{id}', { params: { path: { id: m.id }, header: ifMatch(m.etag) } }));
                            if (res.ok) setWatching(res.data?.operation_id ?? null);
                            await refresh();
                          }}
                        />
                      )}
                    </Allowed>
                  </div>
                </li>
              ))}
            </ul>
          );
        }}
      </Loaded>
      <h2 id="suspensions-title">Suspensions</h2>
      <Loaded load={suspensions} what="suspensions">
        {(rows) => {
          if (rows.length === 0) return <p class="empty">No suspended machines. Suspending keeps a machine's disk as a snapshot and stops paying for its server.</p>;
          return (
            <ul class="rows" aria-labelledby="suspensions-title">
              {rows.map((s) => (
                <li key={s.id}>
                  <span>
                    <strong>{s.hostname}</strong>{' '}
                    <span class="muted">
                      {s.server_type} in {s.location} · {s.reason} · {euros(s.monthly_cost_cents)} a month
                    </span>
                    <br />
                    <span class={s.expires_at - Date.now() / 1000 < 7 * 86_400 ? 'error' : 'muted'}>
                      Its snapshot is deleted {relative(s.expires_at)} (<time dateTime={new Date(s.expires_at * 1000).toISOString()}>{new Date(s.expires_at * 1000).toLocaleDateString()}</time>)
                    </span>
                  </span>
                </li>
              ))}
            </ul>
          );
        }}
      </Loaded>
      {can(me, 'write') && (
        <form class="card form" onSubmit={submit} aria-labelledby="new-machine" noValidate>
          <h2 id="new-machine">New machine</h2>
          {allConfigs.length === 0 ? (
            <p class="empty">
              A machine is made from a compute config: <a href="/console/compute">make one first</a>.
            </p>
          ) : (
            <>
              <Field label="Config" name="machine-config" error={errors['compute_config_id']}>
                <select {...inputProps('machine-config', errors['compute_config_id'])} value={config?.id} onChange={(e) => setConfigId((e.target as HTMLSelectElement).value)}>
                  {allConfigs.map((c) => (
                    <option key={c.id} value={c.id}>
                      {c.name} ({c.region}, {c.image})
                    </option>
                  ))}
                </select>
              </Field>
              <Field label="Server type" name="machine-type" error={errors['server_type']}>
                <select {...inputProps('machine-type', errors['server_type'])} value={chosenType} onChange={(e) => setServerType((e.target as HTMLSelectElement).value)}>
                  {types.map((t) => (
                    <option key={t.id} value={t.id}>
                      {t.id}: {t.cores} cores, {t.memory_gb} GB, {euros(t.prices.find((p) => p.region === config?.region)?.monthly_price_cents ?? t.monthly_price_cents)} a month
                    </option>
                  ))}
                </select>
              </Field>
              <Field
                label="Cluster"
                name="machine-cluster"
                error={errors['cluster_id']}
                hint={fitting.length === 0 ? `No cluster of ${config?.region ?? 'this region'} yet: the machine joins the default cluster.` : `Clusters of ${config?.region}, or the default cluster`}
              >
                <select {...inputProps('machine-cluster', errors['cluster_id'])} value={chosenCluster} onChange={(e) => setClusterId((e.target as HTMLSelectElement).value)}>
                  <option value="">default (any region)</option>
                  {fitting.map((c) => (
                    <option key={c.id} value={c.id}>
                      {c.name} ({c.region})
                    </option>
                  ))}
                </select>
              </Field>
              <Field label="Host name (optional)" name="machine-hostname" error={errors['hostname']}>
                <input {...inputProps('machine-hostname', errors['hostname'])} value={hostname} onInput={(e) => setHostname((e.target as HTMLInputElement).value)} />
              </Field>
              <FormError error={create.error} fields={['compute_config_id', 'server_type', 'hostname', 'cluster_id']} />
              <div class="actions">
                <button type="submit" disabled={create.busy}>
                  Create machine
                </button>
              </div>
            </>
          )}
        </form>
      )}
    </section>
  );
}
