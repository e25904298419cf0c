import { useContext, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import type { SecretVersion } from '@workspace-platform/sdk';
import { api, messageOf } from '../../api.js';
import { ifMatch } from '../../conflict.js';
import { Allowed, Badge, ConfirmButton, CopyButton, Field, FormError, inputProps, Loaded, PageHead, Time } from '../../components.js';
import { fieldErrors } from '../../format.js';
import { useAction, useLoad } from '../../hooks.js';
import { can, SessionContext } from '../../session.js';

const toBase64 = (bytes: Uint8Array) => {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
};

/** Decoded for display when it is text; binary payloads are offered as base64. */
function decode(data: string): { text: string; binary: boolean } {
  const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), binary: false };
  } catch {
    return { text: data, binary: true };
  }
}

/** A version's payload, shown only when asked (each reveal is an access in the audit log), hidden again on demand. */
function Reveal({ secretId, version }: { secretId: string; version: SecretVersion }) {
  const [value, setValue] = useState<{ text: string; binary: boolean } | null>(null);
  const [error, setError] = useState<string | null>(null);
  if (version.state !== 'enabled') return null;
  if (value) {
    return (
      <div class="reveal">
        <p class="secret-value" aria-label={`Value of version ${version.version_number}`}>
          {value.text}
        </p>
        {value.binary && <p class="muted">Not text: shown as base64.</p>}
        <div class="actions">
          <CopyButton value={value.text} />
          <button type="button" class="secondary" onClick={() => setValue(null)}>
            Hide
          </button>
        </div>
      </div>
    );
  }
  return (
    <>
      <button
        type="button"
        class="secondary"
        aria-label={`Reveal version ${version.version_number}`}
        onClick={async () => {
          const res = await api.GET('/v1/secrets/{id}/versions/{vid}:access', { params: { path: { id: secretId, vid: version.id } } });
          if (res.error) return setError(messageOf(res.error));
          setError(null);
          setValue(decode(res.data.data));
        }}
      >
        Reveal
      </button>
      {error && <span class="error">{error}</span>}
    </>
  );
}

/** A secret's versions with their states; add one (pasted or from a file), enable, disable, destroy, reveal. */
export function SecretView() {
  const { params } = useRoute();
  const { route } = useLocation();
  const me = useContext(SessionContext);
  const id = params['id'];
  const secret = useLoad(() => api.GET('/v1/secrets/{id}', { params: { path: { id } } }), [id]);
  const versions = useLoad(() => api.GET('/v1/secrets/{id}/versions', { params: { path: { id }, query: { limit: 100 } } }), [id]);
  const [value, setValue] = useState('');
  const [file, setFile] = useState<{ name: string; data: string } | null>(null);
  const [comment, setComment] = useState('');
  // A file input cannot be emptied by state: a new key gives a new, empty one.
  const [fileKey, setFileKey] = useState(0);
  const add = useAction();
  const change = useAction();
  const remove = useAction();
  const errors = fieldErrors(add.error);
  const reloadAll = async () => {
    await Promise.all([secret.reload(), versions.reload()]);
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    const data = file ? file.data : toBase64(new TextEncoder().encode(value));
    const res = await add.run(() => api.POST('/v1/secrets/{id}/versions', { params: { path: { id } }, body: { data, ...(comment ? { comment } : {}) } }));
    if (res.ok) {
      setValue('');
      setFile(null);
      setFileKey((k) => k + 1);
      setComment('');
    }
    await reloadAll();
  };
  const transition = async (v: SecretVersion, action: 'enable' | 'disable' | 'destroy') => {
    const params = { path: { id, vid: v.id }, header: ifMatch(v.etag) };
    await change.run(() =>
      action === 'enable'
        ? api.POST('/v1/secrets/{id}/versions/{vid}:enable', { params })
        : action === 'disable'
          ? api.POST('/v1/secrets/{id}/versions/{vid}:disable', { params })
          : api.POST('/v1/secrets/{id}/versions/{vid}:destroy', { params }),
    );
    await versions.reload();
  };
  const s = secret.data;
  return (
    <section aria-labelledby="secret-title">
      <p class="crumbs">
        <a href="/console/secrets">Secrets</a> /
      </p>
      <Loaded load={secret} what="the secret">
        {() => (
          <PageHead title={s!.name} id="secret-title">
            <Allowed to="secrets.delete">
              <ConfirmButton
                label="Delete secret"
                title={`Delete ${s!.name}?`}
                danger
                typeToConfirm={s!.name}
                body={<p>The secret and every version of it are deleted for good. Anything that reads it stops working.</p>}
                onConfirm={async () => {
                  const res = await remove.run(() => api.DELETE('/v1/secrets/{id}', { params: { path: { id }, header: ifMatch(s!.etag) } }));
                  if (res.ok) route('/console/secrets');
                  else await reloadAll();
                }}
              />
            </Allowed>
          </PageHead>
        )}
      </Loaded>
      {remove.error ? (
        <p role="alert" class="error">
          {messageOf(remove.error)}
        </p>
      ) : null}
      <h2>Versions</h2>
      {change.error ? (
        <p role="alert" class="error">
          {messageOf(change.error)}
        </p>
      ) : null}
      <Loaded load={versions} what="versions">
        {(page) => {
          const rows = page.data;
          if (rows.length === 0) return <p class="empty">{can(me, 'write') ? 'No versions yet: add the first value below.' : 'No versions yet.'}</p>;
          return (
            <ul class="rows">
              {rows.map((v) => (
                <li key={v.id}>
                  <div>
                    <strong>Version {v.version_number}</strong> <Badge value={v.state} />{' '}
                    <span class="muted">
                      added <Time at={v.created_at} />
                    </span>
                    {v.comment && <p class="muted">{v.comment}</p>}
                    <Allowed to="secrets.access">
                      <Reveal secretId={id} version={v} />
                    </Allowed>
                  </div>
                  <div class="actions">
                    <Allowed to="write">
                      {v.state === 'disabled' && (
                        <button type="button" class="secondary" onClick={() => transition(v, 'enable')} aria-label={`Enable version ${v.version_number}`}>
                          Enable
                        </button>
                      )}
                      {v.state === 'enabled' && (
                        <button type="button" class="secondary" onClick={() => transition(v, 'disable')} aria-label={`Disable version ${v.version_number}`}>
                          Disable
                        </button>
                      )}
                    </Allowed>
                    <Allowed to="secret_versions.destroy">
                      {v.state !== 'destroyed' && s && (
                        <ConfirmButton
                          label={`Destroy version ${v.version_number}`}
                          title={`Destroy version ${v.version_number} of ${s.name}?`}
                          danger
                          typeToConfirm={s.name}
                          confirmLabel="Destroy"
                          body={<p>Its value is erased for good; the version stays listed as destroyed. This cannot be undone.</p>}
                          onConfirm={() => transition(v, 'destroy')}
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
      {/* Only for a secret that exists, and for those who may write. */}
      {s && can(me, 'write') && (
        <form class="card form" onSubmit={submit} aria-labelledby="new-version" noValidate>
          <h2 id="new-version">Add a version</h2>
          <Field label="Value" name="value" error={errors['data']} hint="Paste it here, or choose a file instead">
            <textarea
              {...inputProps('value', errors['data'])}
              rows={3}
              value={value}
              disabled={file !== null}
              autocomplete="off"
              spellcheck={false}
              onInput={(e) => setValue((e.target as HTMLTextAreaElement).value)}
            />
          </Field>
          <Field label="Or a file" name="file">
            <input
              key={fileKey}
              type="file"
              id="f-file"
              onChange={async (e) => {
                const f = (e.target as HTMLInputElement).files?.[0];
                setFile(f ? { name: f.name, data: toBase64(new Uint8Array(await f.arrayBuffer())) } : null);
              }}
            />
          </Field>
          <Field label="Comment (optional)" name="comment" error={errors['comment']}>
            <input {...inputProps('comment', errors['comment'])} value={comment} onInput={(e) => setComment((e.target as HTMLInputElement).value)} />
          </Field>
          <FormError error={add.error} fields={['data', 'comment']} />
          <div class="actions">
            <button type="submit" disabled={add.busy || (!file && value === '')}>
              Add version
            </button>
          </div>
        </form>
      )}
    </section>
  );
}
