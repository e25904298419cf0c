import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Schemas } from '@workspace-platform/sdk';
import { api, fieldError, messageOf } from '../api.js';

type Field = keyof Schemas['SetupBody'];

const FIELDS: { name: Field; label: string; type: string; autocomplete: string; hint?: string }[] = [
  { name: 'code', label: 'Setup code', type: 'text', autocomplete: 'off', hint: "The code in the server's log, on the line that starts “First run”." },
  { name: 'name', label: 'Your name', type: 'text', autocomplete: 'name' },
  { name: 'email', label: 'Email', type: 'email', autocomplete: 'username' },
  { name: 'password', label: 'Password', type: 'password', autocomplete: 'new-password', hint: '12 to 256 characters.' },
  { name: 'workspace_name', label: 'Workspace name', type: 'text', autocomplete: 'organization' },
];

/**
 * The first run in the browser (issue 50, point 10): while the database has no user, the server
 * logs a setup code and the console asks for it here, with the first owner's name, email and
 * password and the first workspace's name (POST /v1/setup, which signs the owner in with a cookie).
 * A wrong code or a field the server refuses is said beside its field, and focus goes there.
 */
export function FirstRun({ onDone }: { onDone: (workspaceId: string) => Promise<void> }) {
  const [values, setValues] = useState<Record<Field, string>>({ code: '', name: '', email: '', password: '', workspace_name: '' });
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  const errorOf = (field: Field) => fieldError(error, field);
  const general = error && !FIELDS.some((f) => errorOf(f.name)) ? messageOf(error) : null;

  // Where the eye should go after a refusal: the first field the server named, else the alert (in
  // the frame the refusal first shows in, as the audit detail does).
  useLayoutEffect(() => {
    if (!error) return;
    const target = form.current?.querySelector<HTMLElement>('[aria-invalid="true"], [role="alert"]');
    target?.focus();
  }, [error]);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    const res = await api.POST('/v1/setup', { body: { ...values, code: values.code.trim() } });
    setBusy(false);
    if (res.error) return setError(res.error);
    setError(null);
    await onDone(res.data.workspace_id);
  };

  return (
    <form ref={form} class="card sign-in" onSubmit={submit} aria-labelledby="first-run-title" noValidate>
      <h1 id="first-run-title">Set up Workspace Platform</h1>
      <p class="hint">No one has signed up on this server yet. Make the first owner and their workspace.</p>
      {FIELDS.map((f) => {
        const message = errorOf(f.name);
        return (
          <div key={f.name} class="field">
            <label>
              {f.label}
              <input
                type={f.type}
                name={f.name}
                autocomplete={f.autocomplete}
                required
                value={values[f.name]}
                onInput={(e) => setValues({ ...values, [f.name]: (e.target as HTMLInputElement).value })}
                aria-invalid={message ? 'true' : undefined}
                aria-describedby={message ? `${f.name}-error` : f.hint ? `${f.name}-hint` : undefined}
              />
            </label>
            {f.hint && !message && (
              <p class="hint" id={`${f.name}-hint`}>
                {f.hint}
              </p>
            )}
            {message && (
              <p class="field-error" id={`${f.name}-error`}>
                {message}
              </p>
            )}
          </div>
        );
      })}
      {general && (
        <p role="alert" class="error" tabIndex={-1}>
          {general}
        </p>
      )}
      <button type="submit" disabled={busy}>
        {busy ? 'Setting up…' : 'Make the owner and workspace'}
      </button>
    </form>
  );
}
