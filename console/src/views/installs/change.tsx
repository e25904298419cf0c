import { useState } from 'preact/hooks';
import type { Install } from '@workspace-platform/sdk';
import { api } from '../../api.js';
import { explainConflict, ifMatch } from '../../conflict.js';
import { Field, FormError, inputProps } from '../../components.js';
import { fieldErrors } from '../../format.js';
import { useAction, useLoad } from '../../hooks.js';
import { parseValues } from './packages.js';
import { RenderedDiff } from './rendered-diff.js';

type Scalar = string | number | boolean;
const isScalar = (v: unknown): v is Scalar => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/** A field per value the install has now, when each is a string, number or yes/no; else null (JSON it is). */
function formOf(values: Record<string, unknown>): [string, Scalar][] | null {
  const entries = Object.entries(values);
  return entries.every(([, v]) => isScalar(v)) ? (entries as [string, Scalar][]) : null;
}

/**
 * Changing an install: its version, its values (a field per value it has, JSON for the rest or
 * when asked), automatic updates. "Preview" renders the change as the install would, writing
 * nothing, and shows what it would change in the repository; "Apply" is offered once the change
 * on screen has been previewed, and renders it for real (If-Match).
 */
export function ChangeInstall({ install, headRenderId, onApplied }: { install: Install; headRenderId: string | null; onApplied: (renderId: string | null | undefined) => Promise<void> }) {
  const versions = useLoad(() => api.GET('/v1/packages/{id}/versions', { params: { path: { id: install.package_id }, query: { limit: 100 } } }), [install.package_id]);
  const [versionId, setVersionId] = useState(install.desired_version.id);
  const fields = formOf(install.values);
  const [asJson, setAsJson] = useState(fields === null);
  const [form, setForm] = useState<Record<string, Scalar>>(Object.fromEntries(fields ?? []));
  const [jsonText, setJsonText] = useState(JSON.stringify(install.values, null, 2));
  const [automatic, setAutomatic] = useState(install.automatic_updates_enabled);
  const [delivery, setDelivery] = useState(install.delivery);
  const [approvals, setApprovals] = useState(String(install.required_approvals));
  const [previewed, setPreviewed] = useState<{ key: string; before: Record<string, string>; after: Record<string, string> } | null>(null);
  const previewing = useAction();
  const applying = useAction();
  const parsed = asJson ? parseValues(jsonText) : { values: form };
  const key = JSON.stringify([versionId, parsed.values ?? null]);
  const current = previewed && previewed.key === key ? previewed : null;
  const errors = { ...fieldErrors(previewing.error), ...fieldErrors(applying.error) };
  const valuesError = ('error' in parsed ? parsed.error : undefined) ?? errors['values'];
  const changesRender = versionId !== install.desired_version.id || JSON.stringify(parsed.values) !== JSON.stringify(install.values);
  // Review settings render nothing: they decide how the next render reaches main.
  const requiredApprovals = approvals.trim() === '' ? NaN : Number(approvals);
  const approvalsError = Number.isInteger(requiredApprovals) && requiredApprovals >= 0 && requiredApprovals <= 10 ? errors['required_approvals'] : 'A whole number from 0 to 10.';
  const changesReview = delivery !== install.delivery || requiredApprovals !== install.required_approvals;
  const changesAnything = changesRender || automatic !== install.automatic_updates_enabled || changesReview;

  const preview = async () => {
    const res = await previewing.run(async () => {
      const after = await api.POST('/v1/packages/{id}/versions/{version_id}:preview', { params: { path: { id: install.package_id, version_id: versionId } }, body: { values: parsed.values ?? {} } });
      if (!after.data) return after;
      const before = headRenderId ? await api.GET('/v1/renders/{id}/files', { params: { path: { id: headRenderId } } }) : null;
      if (before?.error) return before;
      return { data: { after: after.data.files, before: Object.fromEntries((before?.data?.files ?? []).map((f) => [f.path, f.content ?? `(${f.size} bytes, not text)`])) } };
    });
    if (res.data && 'after' in res.data) setPreviewed({ key, before: res.data.before, after: res.data.after });
  };
  const apply = async (e: Event) => {
    e.preventDefault();
    const body = {
      ...(versionId !== install.desired_version.id ? { desired_version_id: versionId } : {}),
      ...(JSON.stringify(parsed.values) !== JSON.stringify(install.values) ? { values: parsed.values ?? {} } : {}),
      ...(automatic !== install.automatic_updates_enabled ? { automatic_updates_enabled: automatic } : {}),
      ...(delivery !== install.delivery ? { delivery } : {}),
      ...(requiredApprovals !== install.required_approvals ? { required_approvals: requiredApprovals } : {}),
    };
    const res = await applying.run(() => api.PATCH('/v1/installs/{id}', { params: { path: { id: install.id }, header: ifMatch(install.etag) }, body }));
    if (res.ok) {
      setPreviewed(null);
      await onApplied(changesRender ? res.data?.last_render?.id : null);
    } else if (explainConflict(res.error, 'install', 'change')) {
      // Their version comes in with its etag; the edits on screen stay, to be looked over and applied again.
      await onApplied(null);
    }
  };
  const conflict = explainConflict(applying.error, 'install', 'change');

  return (
    <form class="card form" aria-labelledby="change-title" noValidate onSubmit={apply}>
      <h2 id="change-title">Change the install</h2>
      <Field label="Version" name="install-version" error={errors['desired_version_id']}>
        <select {...inputProps('install-version', errors['desired_version_id'])} value={versionId} onChange={(e) => setVersionId((e.target as HTMLSelectElement).value)}>
          {(versions.data?.data ?? [install.desired_version]).map((v) => (
            <option key={v.id} value={v.id}>
              {v.semver}
              {v.id === install.desired_version.id ? ' (wanted now)' : ''}
            </option>
          ))}
        </select>
      </Field>
      <fieldset>
        <legend>Values</legend>
        {!asJson &&
          Object.entries(form).map(([name, value]) => (
            <Field key={name} label={name} name={`value-${name}`} error={errors[`values.${name}`]}>
              {typeof value === 'boolean' ? (
                <input type="checkbox" {...inputProps(`value-${name}`, undefined)} checked={value} onChange={(e) => setForm({ ...form, [name]: (e.target as HTMLInputElement).checked })} />
              ) : (
                <input
                  {...inputProps(`value-${name}`, errors[`values.${name}`])}
                  type={typeof value === 'number' ? 'number' : 'text'}
                  value={String(value)}
                  onInput={(e) => {
                    const raw = (e.target as HTMLInputElement).value;
                    setForm({ ...form, [name]: typeof value === 'number' && raw.trim() !== '' && Number.isFinite(Number(raw)) ? Number(raw) : raw });
                  }}
                />
              )}
            </Field>
          ))}
        {asJson && (
          <Field label="Values (JSON)" name="install-values" error={valuesError}>
            <textarea {...inputProps('install-values', valuesError)} rows={6} spellcheck={false} value={jsonText} onInput={(e) => setJsonText((e.target as HTMLTextAreaElement).value)} />
          </Field>
        )}
        {fields !== null && (
          <button
            type="button"
            class="link"
            onClick={() => {
              if (!asJson) setJsonText(JSON.stringify(form, null, 2));
              else if (parsed.values && formOf(parsed.values)) setForm(Object.fromEntries(formOf(parsed.values)!));
              setAsJson(!asJson);
            }}
          >
            {asJson ? 'Edit as fields' : 'Edit as JSON (to add or remove values)'}
          </button>
        )}
      </fieldset>
      <label class="inline">
        <input type="checkbox" checked={automatic} onChange={(e) => setAutomatic((e.target as HTMLInputElement).checked)} /> Update automatically to newer versions of the package (not pre-releases)
      </label>
      <Field label="Delivery" name="install-delivery" error={errors['delivery']}>
        <select
          {...inputProps('install-delivery', errors['delivery'])}
          value={delivery}
          onChange={(e) => setDelivery((e.target as HTMLSelectElement).value === 'change_request' ? 'change_request' : 'direct')}
        >
          <option value="direct">Each render moves main at once</option>
          <option value="change_request">Each render waits for review as a change request</option>
        </select>
      </Field>
      <Field
        label="Approvals required"
        name="install-approvals"
        error={approvalsError}
        hint="Approvals a change request needs before it can be merged (0-10); a person never approves their own change."
      >
        <input {...inputProps('install-approvals', approvalsError)} type="number" min={0} max={10} step={1} value={approvals} onInput={(e) => setApprovals((e.target as HTMLInputElement).value)} />
      </Field>
      {current && <RenderedDiff before={current.before} after={current.after} />}
      {conflict && (
        <p role="alert" class="error">
          {conflict}
        </p>
      )}
      <FormError
        error={previewing.error ?? (conflict ? null : applying.error)}
        fields={[...(asJson ? ['values', 'desired_version_id'] : ['desired_version_id', ...Object.keys(form).map((k) => `values.${k}`)]), 'delivery', 'required_approvals']}
      />
      <div class="actions">
        <button type="button" class="secondary" disabled={!changesRender || Boolean(valuesError) || previewing.busy} onClick={() => void preview()}>
          {previewing.busy ? 'Rendering a preview…' : 'Preview the change'}
        </button>
        <button type="submit" disabled={!changesAnything || (changesRender && !current) || Boolean(approvalsError) || applying.busy}>
          {changesRender ? 'Apply and render' : 'Apply'}
        </button>
      </div>
      {changesRender && !current && <p class="hint">Preview the change to see what it would do to the repository; then apply it.</p>}
      {changesRender && delivery === 'change_request' && install.current_version !== null && <p class="hint">Its render will wait for review as a change request; main moves once it is merged.</p>}
    </form>
  );
}
