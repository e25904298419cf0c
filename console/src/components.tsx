/**
 * The console's small shared components: what a load shows, times people read, fields with
 * their errors, confirmations, values shown once with a copy button, tables, page heads and
 * state labels. Views compose these.
 */
import type { ComponentChildren } from 'preact';
import { useContext, useRef, useState } from 'preact/hooks';
import { messageOf } from './api.js';
import { can, SessionContext, type Permission } from './session.js';
import { fieldErrors, relative } from './format.js';
import { useTick } from './hooks.js';

/**
 * Its children only when the caller may take the action (GET /v1/me's `permissions`); else
 * `otherwise`, if given. A control that would answer 403 is not drawn.
 */
export function Allowed({ to, children, otherwise = null }: { to: Permission; children: ComponentChildren; otherwise?: ComponentChildren }) {
  const me = useContext(SessionContext);
  return <>{can(me, to) ? children : otherwise}</>;
}

/** What a load shows while it loads or when it failed; its children once there is data. */
export function Loaded<T>({ load, what, children }: { load: { data: T | null; error: unknown; loading: boolean }; what: string; children: (data: T) => ComponentChildren }) {
  if (load.error)
    return (
      <p role="alert" class="error">
        {messageOf(load.error)}
      </p>
    );
  if (load.data === null)
    return (
      <p role="status" class="muted">
        Loading {what}…
      </p>
    );
  return <>{children(load.data)}</>;
}

/** A Unix time as people read it (relative), with the exact time on hover and for machines. */
export function Time({ at }: { at: number | null | undefined }) {
  useTick();
  if (at === null || at === undefined) return <span class="muted">—</span>;
  const date = new Date(at * 1000);
  return (
    <time dateTime={date.toISOString()} title={date.toLocaleString()}>
      {relative(at)}
    </time>
  );
}

/** An error that no field shows: the first entry without a path, or with one no field claims. */
export function FormError({ error, fields }: { error: unknown; fields: string[] }) {
  if (!error) return null;
  const byField = fieldErrors(error);
  const claimed = Object.keys(byField).some((k) => fields.some((f) => k === f || k.endsWith(`.${f}`) || k.startsWith(`${f}.`)));
  return claimed ? null : (
    <p role="alert" class="error">
      {messageOf(error)}
    </p>
  );
}

/** A labelled input with its error beside it; the error is tied to the input for screen readers. */
export function Field({ label, name, error, children, hint }: { label: string; name: string; error?: string | undefined; children: ComponentChildren; hint?: string }) {
  return (
    <div class="field">
      <label for={`f-${name}`}>{label}</label>
      {children}
      {hint && <small class="muted">{hint}</small>}
      {error && (
        <p class="field-error" id={`f-${name}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}

/** Input props for a field: id, invalid state and the error it describes. */
export const inputProps = (name: string, error: string | undefined) => ({
  id: `f-${name}`,
  name,
  'aria-invalid': error ? ('true' as const) : undefined,
  'aria-describedby': error ? `f-${name}-error` : undefined,
});

/**
 * A button that asks first, in a modal dialog (keyboard and screen-reader friendly); when
 * `typeToConfirm` is set the person must type it (destroying a secret's version).
 */
export function ConfirmButton(props: {
  label: string;
  title: string;
  body: ComponentChildren;
  confirmLabel?: string;
  typeToConfirm?: string;
  danger?: boolean;
  disabled?: boolean;
  onConfirm: () => Promise<unknown>;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [typed, setTyped] = useState('');
  const [busy, setBusy] = useState(false);
  const ready = !props.typeToConfirm || typed === props.typeToConfirm;
  const confirm = async (e: Event) => {
    e.preventDefault();
    if (!ready) return;
    setBusy(true);
    try {
      await props.onConfirm();
    } finally {
      setBusy(false);
      setTyped('');
      dialog.current?.close();
    }
  };
  return (
    <>
      <button type="button" class={props.danger ? 'danger' : 'secondary'} disabled={props.disabled} onClick={() => dialog.current?.showModal()}>
        {props.label}
      </button>
      <dialog ref={dialog} aria-label={props.title} onClose={() => setTyped('')}>
        <form method="dialog" onSubmit={confirm} class="confirm">
          <h2>{props.title}</h2>
          <div>{props.body}</div>
          {props.typeToConfirm && (
            <label>
              Type <code>{props.typeToConfirm}</code> to confirm
              <input value={typed} autocomplete="off" onInput={(e) => setTyped((e.target as HTMLInputElement).value)} />
            </label>
          )}
          <div class="actions">
            <button type="button" class="secondary" onClick={() => dialog.current?.close()}>
              Cancel
            </button>
            <button type="submit" class={props.danger ? 'danger' : ''} disabled={!ready || busy}>
              {props.confirmLabel ?? props.label}
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}

/** Copies a value shown once (a token's plaintext) to the clipboard, and says whether it could. */
export function CopyButton({ value, label = 'Copy' }: { value: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  return (
    <>
      <button
        type="button"
        class="secondary"
        onClick={() =>
          navigator.clipboard.writeText(value).then(
            () => setState('copied'),
            () => setState('failed'),
          )
        }
      >
        {state === 'copied' ? 'Copied' : label}
      </button>
      {state === 'failed' && <span class="error">The browser refused the clipboard: select the text and copy it.</span>}
    </>
  );
}

/**
 * A value the server shows once (a token, a signing secret, an invitation link): said so, with
 * a copy button, until the person dismisses it.
 */
export function ShownOnce({ children, value, label, copyLabel, onDone }: { children: ComponentChildren; value: string; label: string; copyLabel: string; onDone: () => void }) {
  return (
    <div class="card" role="status">
      <p>{children}</p>
      <p class="secret-value" aria-label={label}>
        {value}
      </p>
      <div class="actions">
        <CopyButton value={value} label={copyLabel} />
        <button type="button" class="secondary" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}

export interface Column<T> {
  header: string;
  cell: (row: T) => ComponentChildren;
  /** A header for screen readers only (a column of buttons). */
  quiet?: boolean;
}

/** Rows as a table that scrolls sideways inside its box on a narrow screen, never the page. */
export function Table<T>({ rows, columns, rowKey, label, labelledBy }: { rows: readonly T[]; columns: Column<T>[]; rowKey: (row: T) => string; label?: string; labelledBy?: string }) {
  return (
    <div class="table-wrap">
      <table aria-label={label} aria-labelledby={labelledBy}>
        <thead>
          <tr>
            {columns.map((c) => (
              <th scope="col" key={c.header}>
                {c.quiet ? <span class="visually-hidden">{c.header}</span> : c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={rowKey(r)}>
              {columns.map((c) => (
                <td key={c.header}>{c.cell(r)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A page's title, its actions, and the live region where the outcome of an action is said. */
export function PageHead({ title, id, children }: { title: ComponentChildren; id: string; children?: ComponentChildren }) {
  return (
    <div class="page-head">
      <h1 id={id}>{title}</h1>
      {children && <div class="actions">{children}</div>}
    </div>
  );
}

/** A state as a small coloured label. */
export function Badge({ value, tone }: { value: string; tone?: 'good' | 'warn' | 'bad' | 'info' }) {
  const t = tone ?? toneOf(value);
  return <span class={`state state-${t}`}>{value.replace(/_/g, ' ')}</span>;
}

function toneOf(value: string): 'good' | 'warn' | 'bad' | 'info' {
  if (['running', 'succeeded', 'enabled', 'active', 'accepted', 'merged', 'ready'].includes(value)) return 'good';
  if (['failed', 'destroyed', 'disabled', 'expired', 'deleted', 'revoked', 'missing', 'degraded'].includes(value)) return 'bad';
  if (['suspended', 'suspending', 'pending', 'queued', 'archived', 'drifted', 'awaiting_merge', 'provisioning'].includes(value)) return 'warn';
  return 'info';
}
