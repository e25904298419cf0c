import { useContext, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import type { ErrorEnvelope, Schemas } from '@workspace-platform/sdk';
import { api, messageOf } from '../../api.js';
import { explainConflict, ifMatch } from '../../conflict.js';
import { can, SessionContext } from '../../session.js';
import { Allowed, Badge, ConfirmButton, Field, FormError, inputProps, Loaded, PageHead, Time } from '../../components.js';
import { fieldErrors } from '../../format.js';
import { useAction, useLoad, useRefreshWhile } from '../../hooks.js';
import { InstallRows } from '../installs/installs.js';

type Cluster = Schemas['Cluster'];
type Region = Schemas['Region'];
type Counts = Cluster['machine_counts'];

/** The statuses a machine can be counted in, in the order people read them. */
const COUNTED = ['running', 'creating', 'resuming', 'suspending', 'suspended', 'deleting', 'failed', 'expired'] as const satisfies readonly (keyof Counts)[];

/** A cluster's machines in words: "3 machines: 2 running, 1 creating"; "no machines". */
export function countsInWords(counts: Counts): string {
  if (counts.total === 0) return 'no machines';
  const parts = COUNTED.filter((s) => counts[s] > 0).map((s) => `${counts[s]} ${s}`);
  return `${counts.total} machine${counts.total === 1 ? '' : 's'}: ${parts.join(', ')}`;
}

/** A region as people know it: its city and the provider's code. */
export const regionLabel = (r: Region) => `${r.city}, ${r.name} (${r.id})`;

/** A cluster's region in words, from GET /v1/regions when it is there; the default cluster takes any. */
function RegionName({ id, regions }: { id: string | null; regions: Region[] | undefined }) {
  if (id === null) return <>any region</>;
  const r = regions?.find((x) => x.id === id);
  return <>{r ? `${r.city} (${r.id})` : id}</>;
}

/** The entry of a delete refused because the cluster still holds machines or installs (7412). */
const notEmptyEntry = (error: unknown) => (error as Partial<ErrorEnvelope> | null)?.errors?.find((e) => e.code === 7412);

/**
 * That refusal in words, naming each machine and install by the name people know it by (from
 * the cluster's lists, loaded again after the refusal), linked to where it is managed.
 */
function NotEmpty({ entry, machines, installs }: { entry: ErrorEnvelope['errors'][number]; machines: Schemas['Machine'][]; installs: Schemas['Install'][] }) {
  const ids = (key: string) => (entry.metadata?.[key] ?? '').split(',').filter(Boolean);
  const machineIds = ids('machine_ids');
  const installIds = ids('install_ids');
  const machineCount = Number(entry.metadata?.['machine_count'] ?? machineIds.length);
  const installCount = Number(entry.metadata?.['install_count'] ?? installIds.length);
  const held = [machineCount > 0 && `${machineCount} machine${machineCount === 1 ? '' : 's'}`, installCount > 0 && `${installCount} install${installCount === 1 ? '' : 's'}`]
    .filter(Boolean)
    .join(' and ');
  return (
    <div role="alert" class="card conflict" aria-labelledby="not-empty-title">
      <h2 id="not-empty-title">The cluster was not deleted: it still holds {held}</h2>
      <p>
        A cluster is deleted only once it is empty. Delete its machines (a machine being deleted counts until it is gone) and delete its installs or move them to another cluster, then delete it again.
      </p>
      {machineIds.length > 0 && (
        <>
          <p>Its machines:</p>
          <ul class="paths">
            {machineIds.map((id) => {
              const m = machines.find((x) => x.id === id);
              return (
                <li key={id}>
                  <a href="/console/machines">{m ? m.hostname : id}</a>
                  {m && <span class="muted"> ({m.status})</span>}
                </li>
              );
            })}
          </ul>
        </>
      )}
      {installIds.length > 0 && (
        <>
          <p>Its installs:</p>
          <ul class="paths">
            {installIds.map((id) => (
              <li key={id}>
                <a href={`/console/installs/${id}`}>{installs.find((x) => x.id === id)?.name ?? id}</a>
              </li>
            ))}
          </ul>
        </>
      )}
      {(machineCount > machineIds.length || installCount > installIds.length) && <p class="muted">Only the first 50 of each are named.</p>}
    </div>
  );
}

/** The workspace's clusters with their status and machine counts, and a new one in a region chosen with the server types it offers. */
export function ClustersView() {
  const me = useContext(SessionContext);
  const { route } = useLocation();
  const clusters = useLoad(() => api.GET('/v1/clusters', { params: { query: { limit: 100 } } }), [me?.workspace?.id]);
  const regions = useLoad(() => api.GET('/v1/regions', {}), []);
  // One page of installs counts each cluster's; a workspace with more says so rather than undercount.
  const installs = useLoad(() => api.GET('/v1/installs', { params: { query: { limit: 100 } } }), [me?.workspace?.id]);
  useRefreshWhile(
    (clusters.data?.data ?? []).some((c) => c.status === 'provisioning'),
    clusters.reload,
    3000,
  );
  const create = useAction();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [region, setRegion] = useState('');
  const errors = fieldErrors(create.error);
  const allRegions = regions.data?.data ?? [];
  const chosen = allRegions.find((r) => r.id === region) ?? allRegions[0];
  const installsOf = (c: Cluster) => {
    if (!installs.data) return null;
    const n = installs.data.data.filter((i) => i.cluster_id === c.id).length;
    return installs.data.next_cursor ? null : n;
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    const body = { name, region: chosen?.id ?? '', ...(description ? { description } : {}) };
    const res = await create.run(() => api.POST('/v1/clusters', { body }));
    if (res.ok && res.data) return route(`/console/clusters/${res.data.id}`);
    await clusters.reload();
  };
  return (
    <section aria-labelledby="clusters-title">
      <PageHead title="Clusters" id="clusters-title">
        <a class="button secondary" href="/console/machines">
          Machines
        </a>
      </PageHead>
      <p class="lead">A cluster groups machines of one region; installs are placed on one. Machines made without a cluster join the default cluster, which takes any region.</p>
      <Loaded load={clusters} what="clusters">
        {(page) => {
          const rows = page.data;
          if (rows.length === 0) return <p class="empty">No clusters yet.{can(me, 'write') ? ' Make one below in a region.' : ''}</p>;
          return (
            <ul class="rows" aria-labelledby="clusters-title">
              {rows.map((c) => {
                const n = installsOf(c);
                return (
                  <li key={c.id}>
                    <span>
                      <a href={`/console/clusters/${c.id}`}>
                        <strong>{c.name}</strong>
                      </a>{' '}
                      <Badge value={c.status} />
                      {c.is_default && (
                        <>
                          {' '}
                          <span class="state state-info">default</span>
                        </>
                      )}
                      <br />
                      <span class="muted">
                        <RegionName id={c.region} regions={regions.data?.data} /> · {countsInWords(c.machine_counts)} ·{' '}
                        {n === null ? <a href={`/console/clusters/${c.id}`}>its installs</a> : `${n} install${n === 1 ? '' : 's'}`}
                      </span>
                    </span>
                  </li>
                );
              })}
            </ul>
          );
        }}
      </Loaded>
      {can(me, 'write') && (
        <form class="card form" onSubmit={submit} aria-labelledby="new-cluster" noValidate>
          <h2 id="new-cluster">New cluster</h2>
          {regions.error ? (
            <p role="alert" class="error">
              The provider's regions cannot be read: {messageOf(regions.error)}
            </p>
          ) : null}
          <Field label="Name" name="cluster-name" error={errors['name']} hint="1-63 characters of a-z, 0-9 and -, such as eu-prod">
            <input {...inputProps('cluster-name', errors['name'])} value={name} autocomplete="off" onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          </Field>
          <Field label="Region" name="cluster-region" error={errors['region']}>
            <select {...inputProps('cluster-region', errors['region'])} value={chosen?.id ?? ''} onChange={(e) => setRegion((e.target as HTMLSelectElement).value)}>
              {allRegions.map((r) => (
                <option key={r.id} value={r.id}>
                  {regionLabel(r)}
                </option>
              ))}
            </select>
            {chosen && (
              <p class="hint" id="cluster-region-types">
                Server types offered in {chosen.city}: {chosen.server_types.length > 0 ? chosen.server_types.join(', ') : 'none'}
              </p>
            )}
          </Field>
          <Field label="Description (optional)" name="cluster-description" error={errors['description']}>
            <textarea {...inputProps('cluster-description', errors['description'])} rows={2} value={description} onInput={(e) => setDescription((e.target as HTMLTextAreaElement).value)} />
          </Field>
          <FormError error={create.error} fields={['name', 'region', 'description']} />
          <div class="actions">
            <button type="submit" disabled={create.busy || !chosen}>
              Create cluster
            </button>
          </div>
        </form>
      )}
    </section>
  );
}

/**
 * The form that renames a cluster and changes its description (If-Match); the default cluster
 * keeps its name. A field the person has not edited shows the cluster as last read (null
 * here), so after a conflict it takes their version and only the person's own edits are sent again.
 */
function EditCluster({ cluster, onSaved }: { cluster: Cluster; onSaved: () => Promise<unknown> }) {
  const [editedName, setName] = useState<string | null>(null);
  const [editedDescription, setDescription] = useState<string | null>(null);
  const name = editedName ?? cluster.name;
  const description = editedDescription ?? cluster.description ?? '';
  const save = useAction();
  const errors = fieldErrors(save.error);
  const conflict = explainConflict(save.error, 'cluster', 'change');
  const newDescription = description === '' ? null : description;
  const body = {
    ...(name !== cluster.name ? { name } : {}),
    ...(newDescription !== cluster.description ? { description: newDescription } : {}),
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    const res = await save.run(() => api.PATCH('/v1/clusters/{id}', { params: { path: { id: cluster.id }, header: ifMatch(cluster.etag) }, body }));
    // A conflict brings their version in (with its etag); the edits on screen stay to be saved again.
    if (res.ok) {
      setName(null);
      setDescription(null);
    }
    if (res.ok || explainConflict(res.error, 'cluster', 'change')) await onSaved();
  };
  return (
    <form class="card form" onSubmit={submit} aria-labelledby="edit-cluster" noValidate>
      <h2 id="edit-cluster">Name and description</h2>
      {cluster.is_default ? (
        <p class="hint">The default cluster keeps the name default; its description may change.</p>
      ) : (
        <Field label="Name" name="cluster-rename" error={errors['name']}>
          <input {...inputProps('cluster-rename', errors['name'])} value={name} autocomplete="off" onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </Field>
      )}
      <Field label="Description" name="cluster-edit-description" error={errors['description']}>
        <textarea {...inputProps('cluster-edit-description', errors['description'])} rows={2} value={description} onInput={(e) => setDescription((e.target as HTMLTextAreaElement).value)} />
      </Field>
      {conflict && (
        <p role="alert" class="error">
          {conflict}
        </p>
      )}
      <FormError error={conflict ? null : save.error} fields={['name', 'description']} />
      <div class="actions">
        <button type="submit" disabled={save.busy || Object.keys(body).length === 0}>
          Save
        </button>
      </div>
    </form>
  );
}

/** One cluster: its fields, its machines and installs, rename and description, and delete with what stops it said. */
export function ClusterView() {
  const { params } = useRoute();
  const { route } = useLocation();
  const id = params['id'];
  const cluster = useLoad(() => api.GET('/v1/clusters/{id}', { params: { path: { id } } }), [id]);
  const regions = useLoad(() => api.GET('/v1/regions', {}), []);
  const machines = useLoad(() => api.GET('/v1/machines', { params: { query: { cluster_id: id, limit: 100 } } }), [id]);
  const installs = useLoad(() => api.GET('/v1/installs', { params: { query: { cluster_id: id, limit: 100 } } }), [id]);
  const remove = useAction();
  const refresh = () => Promise.all([cluster.reload(), machines.reload(), installs.reload()]);
  useRefreshWhile(cluster.data?.status === 'provisioning', refresh, 3000);
  const shown = cluster.data;
  const region = shown?.region ? regions.data?.data.find((r) => r.id === shown.region) : undefined;
  return (
    <section aria-labelledby="cluster-title">
      <p class="crumbs">
        <a href="/console/clusters">Clusters</a> /
      </p>
      <Loaded load={cluster} what="the cluster">
        {(c) => (
          <>
            <PageHead title={c.name} id="cluster-title">
              {!c.is_default && (
                <Allowed to="clusters.delete">
                  <ConfirmButton
                    label="Delete cluster"
                    title={`Delete ${c.name}?`}
                    danger
                    typeToConfirm={c.name}
                    body={<p>Only an empty cluster is deleted: while it holds machines or installs, nothing is done and they are named.</p>}
                    onConfirm={async () => {
                      const res = await remove.run(() => api.DELETE('/v1/clusters/{id}', { params: { path: { id: c.id }, header: ifMatch(c.etag) } }));
                      if (res.ok) route('/console/clusters');
                      else await refresh();
                    }}
                  />
                </Allowed>
              )}
            </PageHead>
            <dl class="facts">
              <dt>Status</dt>
              <dd>
                <Badge value={c.status} />
              </dd>
              <dt>Region</dt>
              <dd>{c.region === null ? 'any region (the default cluster)' : region ? regionLabel(region) : c.region}</dd>
              {region && (
                <>
                  <dt>Server types offered</dt>
                  <dd>{region.server_types.join(', ') || 'none'}</dd>
                </>
              )}
              <dt>Machines</dt>
              <dd>{countsInWords(c.machine_counts)}</dd>
              <dt>Description</dt>
              <dd>{c.description ?? <span class="muted">none</span>}</dd>
              {c.is_default && (
                <>
                  <dt>Default</dt>
                  <dd>yes: machines made without a cluster join it</dd>
                </>
              )}
              <dt>Made</dt>
              <dd>
                <Time at={c.created_at} />
              </dd>
            </dl>
          </>
        )}
      </Loaded>
      {remove.error ? (
        notEmptyEntry(remove.error) ? (
          <NotEmpty entry={notEmptyEntry(remove.error)!} machines={machines.data?.data ?? []} installs={installs.data?.data ?? []} />
        ) : (
          <p role="alert" class="error">
            {explainConflict(remove.error, 'cluster', 'delete') ?? messageOf(remove.error)}
          </p>
        )
      ) : null}
      {shown && (
        <Allowed to="write">
          <EditCluster key={shown.id} cluster={shown} onSaved={refresh} />
        </Allowed>
      )}
      <h2 id="cluster-machines">Machines</h2>
      <Loaded load={machines} what="its machines">
        {(page) =>
          page.data.length === 0 ? (
            <p class="empty">
              No machines in this cluster.
              <Allowed to="write">
                {' '}
                <a href={`/console/machines?cluster=${id}`}>Make one</a> from a compute config of its region.
              </Allowed>
            </p>
          ) : (
            <ul class="rows" aria-labelledby="cluster-machines">
              {page.data.map((m) => (
                <li key={m.id}>
                  <span>
                    <a href="/console/machines">
                      <strong>{m.hostname}</strong>
                    </a>{' '}
                    <Badge value={m.status} />
                    <br />
                    <span class="muted">
                      {m.server_type} in {m.location} · {m.ipv4 ?? 'no address'} · made <Time at={m.created_at} />
                    </span>
                  </span>
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
      <h2 id="cluster-installs">Installs</h2>
      <Loaded load={installs} what="its installs">
        {(page) =>
          page.data.length === 0 ? (
            <p class="empty">No installs placed on this cluster. An install's page places it on a cluster.</p>
          ) : (
            <InstallRows installs={page.data} labelledBy="cluster-installs" />
          )
        }
      </Loaded>
    </section>
  );
}
