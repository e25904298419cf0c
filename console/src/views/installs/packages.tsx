import { useContext, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api, messageOf } from '../../api.js';
import { explainConflict, ifMatch } from '../../conflict.js';
import { can, SessionContext } from '../../session.js';
import { Allowed, ConfirmButton, Field, FormError, inputProps, Loaded, PageHead, Time } from '../../components.js';
import { fieldErrors } from '../../format.js';
import { useAction, useLoad } from '../../hooks.js';
import { Files } from './files.js';
import { PublishForm } from './publish.js';

/** The workspace's packages, and a new one by name. */
export function PackagesView() {
  const me = useContext(SessionContext);
  const { route } = useLocation();
  const load = useLoad(() => api.GET('/v1/packages', { params: { query: { limit: 100 } } }), [me?.workspace?.id]);
  const create = useAction();
  const [name, setName] = useState('');
  const errors = fieldErrors(create.error);
  return (
    <section aria-labelledby="packages-title">
      <PageHead title="Packages" id="packages-title" />
      <Loaded load={load} what="packages">
        {(page) => {
          const rows = page.data;
          if (rows.length === 0) return <p class="empty">No packages. A package holds versions of Mustache templates; installs render them into git repositories.</p>;
          return (
            <ul class="rows">
              {rows.map((p) => (
                <li key={p.id}>
                  <a href={`/console/packages/${p.id}`}>{p.name}</a>{' '}
                  <span class="muted">
                    made <Time at={p.created_at} />
                  </span>
                </li>
              ))}
            </ul>
          );
        }}
      </Loaded>
      {can(me, 'write') && (
        <form
          class="card form"
          aria-labelledby="new-package"
          noValidate
          onSubmit={async (e) => {
            e.preventDefault();
            const res = await create.run(() => api.POST('/v1/packages', { body: { name } }));
            if (res.data) route(`/console/packages/${res.data.id}`);
          }}
        >
          <h2 id="new-package">New package</h2>
          <Field label="Name" name="package-name" error={errors['name']}>
            <input {...inputProps('package-name', errors['name'])} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          </Field>
          <FormError error={create.error} fields={['name']} />
          <div class="actions">
            <button type="submit" disabled={create.busy}>
              Create package
            </button>
          </div>
        </form>
      )}
    </section>
  );
}

/** Values typed as JSON: parsed before sending, with the parse error at the field. */
export function parseValues(text: string): { values?: Record<string, unknown>; error?: string } {
  if (text.trim() === '') return { values: {} };
  try {
    const v = JSON.parse(text) as unknown;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return { error: 'Values are a JSON object, such as {"who": "world"}' };
    return { values: v as Record<string, unknown> };
  } catch (e) {
    return { error: `Not valid JSON: ${(e as Error).message}` };
  }
}

/** A package's versions; one version's files, a preview of its render with values, and installing it. */
export function PackageView() {
  const me = useContext(SessionContext);
  const { params, query } = useRoute();
  const { route } = useLocation();
  const id = params['id'];
  const pkg = useLoad(() => api.GET('/v1/packages/{id}', { params: { path: { id } } }), [id]);
  const versions = useLoad(() => api.GET('/v1/packages/{id}/versions', { params: { path: { id }, query: { limit: 100 } } }), [id]);
  const list = versions.data?.data ?? [];
  const chosen = (query['version'] as string | undefined) ?? list[0]?.id;
  const version = useLoad(() => (chosen ? api.GET('/v1/packages/{id}/versions/{version_id}', { params: { path: { id, version_id: chosen } } }) : Promise.resolve({ data: null })), [id, chosen]);
  const [valuesText, setValuesText] = useState('{}');
  const [preview, setPreview] = useState<Record<string, string> | null>(null);
  const [installName, setInstallName] = useState('');
  const [installCluster, setInstallCluster] = useState('');
  const clusters = useLoad(() => (can(me, 'write') ? api.GET('/v1/clusters', { params: { query: { limit: 100 } } }) : Promise.resolve({ data: null })), [me?.workspace?.id]);
  const previewing = useAction();
  const remove = useAction();
  const installing = useAction();
  const parsed = parseValues(valuesText);
  const errors = { ...fieldErrors(previewing.error), ...fieldErrors(installing.error) };
  const valuesError = parsed.error ?? errors['values'];
  return (
    <section aria-labelledby="package-title">
      <p class="crumbs">
        <a href="/console/packages">Packages</a> /
      </p>
      <Loaded load={pkg} what="the package">
        {(p) => (
          <PageHead title={p.name} id="package-title">
            <Allowed to="packages.delete">
              <ConfirmButton
                label="Delete package"
                title={`Delete ${p.name}?`}
                danger
                typeToConfirm={p.name}
                body={<p>The package and its versions are deleted. An install still using it stops the delete, and is named.</p>}
                onConfirm={async () => {
                  const res = await remove.run(() => api.DELETE('/v1/packages/{id}', { params: { path: { id }, header: ifMatch(p.etag) } }));
                  if (res.ok) route('/console/packages');
                  else await pkg.reload();
                }}
              />
            </Allowed>
          </PageHead>
        )}
      </Loaded>
      {remove.error ? (
        <p role="alert" class="error">
          {explainConflict(remove.error, 'package', 'delete') ?? messageOf(remove.error)}
        </p>
      ) : null}
      <Loaded load={versions} what="versions">
        {() =>
          list.length === 0 ? (
            <p class="empty">{can(me, 'write') ? 'No versions yet. Publish the first below, from a folder of templates.' : 'No versions yet.'}</p>
          ) : (
            <label class="inline">
              Version
              <select value={chosen} onChange={(e) => route(`/console/packages/${id}?version=${(e.target as HTMLSelectElement).value}`, true)}>
                {list.map((v) => (
                  <option key={v.id} value={v.id}>
                    {v.semver}
                  </option>
                ))}
              </select>
            </label>
          )
        }
      </Loaded>
      {version.data && (
        <>
          <h2>Templates</h2>
          <Files files={version.data.files} label="Templates of this version" />
          <form class="card form" aria-labelledby="preview-title" noValidate onSubmit={(e) => e.preventDefault()}>
            <h2 id="preview-title">{can(me, 'write') ? 'Preview and install' : 'Preview'}</h2>
            <Field label="Values (JSON)" name="values" error={valuesError}>
              <textarea {...inputProps('values', valuesError)} rows={4} spellcheck={false} value={valuesText} onInput={(e) => setValuesText((e.target as HTMLTextAreaElement).value)} />
            </Field>
            <div class="actions">
              <button
                type="button"
                class="secondary"
                disabled={Boolean(parsed.error) || previewing.busy}
                onClick={async () => {
                  const res = await previewing.run(() =>
                    api.POST('/v1/packages/{id}/versions/{version_id}:preview', { params: { path: { id, version_id: chosen } }, body: { values: parsed.values } }),
                  );
                  setPreview(res.data?.files ?? null);
                }}
              >
                Preview
              </button>
            </div>
            <FormError error={previewing.error} fields={['values']} />
            {preview && <Files files={preview} label="Rendered files" />}
            {can(me, 'write') && (
              <>
                <Field label="Install name" name="install-name" error={errors['name']}>
                  <input {...inputProps('install-name', errors['name'])} value={installName} onInput={(e) => setInstallName((e.target as HTMLInputElement).value)} />
                </Field>
                <Field label="Cluster (optional)" name="install-cluster" error={errors['cluster_id']}>
                  <select {...inputProps('install-cluster', errors['cluster_id'])} value={installCluster} onChange={(e) => setInstallCluster((e.target as HTMLSelectElement).value)}>
                    <option value="">no cluster</option>
                    {(clusters.data?.data ?? []).map((c) => (
                      <option key={c.id} value={c.id}>
                        {c.name} ({c.region ?? 'any region'})
                      </option>
                    ))}
                  </select>
                </Field>
                <FormError error={installing.error} fields={['values', 'name', 'cluster_id']} />
                <div class="actions">
                  <button
                    type="button"
                    disabled={Boolean(parsed.error) || installing.busy}
                    onClick={async () => {
                      const res = await installing.run(() =>
                        api.POST('/v1/installs', { body: { name: installName, package_id: id, version_id: chosen, values: parsed.values, ...(installCluster ? { cluster_id: installCluster } : {}) } }),
                      );
                      if (res.data) route(`/console/installs/${res.data.id}`);
                    }}
                  >
                    Install this version
                  </button>
                </div>
              </>
            )}
          </form>
        </>
      )}
      {version.error ? (
        <p role="alert" class="error">
          {messageOf(version.error)}
        </p>
      ) : null}
      <Allowed to="write">
        <PublishForm
          packageId={id}
          newest={list[0]?.semver}
          onPublished={(versionId) => {
            void versions.reload();
            route(`/console/packages/${id}?version=${versionId}`, true);
          }}
        />
      </Allowed>
    </section>
  );
}
