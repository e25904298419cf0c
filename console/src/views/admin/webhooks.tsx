import { useContext, useState } from 'preact/hooks';
import type { Schemas } from '@workspace-platform/sdk';
import { useLocation, useRoute } from 'preact-iso';
import { api, messageOf } from '../../api.js';
import { ifMatch } from '../../conflict.js';
import { SessionContext } from '../../session.js';
import { EVENT_TYPES, EVENT_TYPE_NAMES, type EventType } from '../../../../src/events/event-type-schemas.js';
import { Allowed, Badge, ConfirmButton, Field, FormError, inputProps, Loaded, PageHead, ShownOnce, Table, Time } from '../../components.js';
import { fieldErrors, oneOf } from '../../format.js';
import { useAction, useLoad, useRefreshWhile } from '../../hooks.js';


/** Webhook endpoints, and a new one: its signing secret shown once. */
export function WebhooksView() {
  const me = useContext(SessionContext);
  const load = useLoad(() => api.GET('/v1/webhooks', { params: { query: { limit: 100 } } }), [me?.workspace?.id]);
  const create = useAction();
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [types, setTypes] = useState<EventType[]>([]);
  const [made, setMade] = useState<Schemas['CreatedWebhook'] | null>(null);
  const errors = fieldErrors(create.error);
  const submit = async (e: Event) => {
    e.preventDefault();
    const res = await create.run(() => api.POST('/v1/webhooks', { body: { url, event_types: types, ...(description ? { description } : {}) } }));
    if (res.ok) {
      setMade(res.data ?? null);
      setUrl('');
      setDescription('');
      setTypes([]);
    }
    await load.reload();
  };
  return (
    <section aria-labelledby="webhooks-title">
      <PageHead title="Webhooks" id="webhooks-title" />
      {made && (
        <ShownOnce value={made.secret} label="Signing secret" copyLabel="Copy secret" onDone={() => setMade(null)}>
          The signing secret of <strong>{made.url}</strong>. Copy it now: it is not shown again. Receivers verify each delivery with it (Standard Webhooks).
        </ShownOnce>
      )}
      <Loaded load={load} what="webhooks">
        {(page) => {
          const rows = page.data;
          if (rows.length === 0) return <p class="empty">No webhooks. Add an https endpoint below to be told of changes as they happen.</p>;
          return (
            <ul class="rows">
              {rows.map((w) => (
                <li key={w.id}>
                  <span>
                    <a href={`/console/admin/webhooks/${w.id}`}>{w.url}</a> <Badge value={w.state} />
                    <br />
                    <span class="muted">{w.event_types.join(', ')}</span>
                  </span>
                </li>
              ))}
            </ul>
          );
        }}
      </Loaded>
      <Allowed to="webhooks.manage">
      <form class="card form" onSubmit={submit} aria-labelledby="new-webhook" noValidate>
        <h2 id="new-webhook">New webhook</h2>
        <Field label="URL" name="webhook-url" error={errors['url']} hint="https, on a public address">
          <input type="url" {...inputProps('webhook-url', errors['url'])} value={url} onInput={(e) => setUrl((e.target as HTMLInputElement).value)} />
        </Field>
        <Field label="Description (optional)" name="webhook-description" error={errors['description']}>
          <input {...inputProps('webhook-description', errors['description'])} value={description} onInput={(e) => setDescription((e.target as HTMLInputElement).value)} />
        </Field>
        <Field label="Events" name="webhook-events" error={errors['event_types']}>
          <select
            multiple
            size={8}
            {...inputProps('webhook-events', errors['event_types'])}
            onChange={(e) => setTypes([...(e.target as HTMLSelectElement).selectedOptions].flatMap((o) => oneOf(EVENT_TYPE_NAMES, o.value) ?? []))}
          >
            {EVENT_TYPE_NAMES.map((t) => (
              <option key={t} value={t} selected={types.includes(t)} title={EVENT_TYPES[t]}>
                {t}
              </option>
            ))}
          </select>
        </Field>
        <FormError error={create.error} fields={['url', 'description', 'event_types']} />
        <div class="actions">
          <button type="submit" disabled={create.busy}>Add webhook</button>
        </div>
      </form>
      </Allowed>
    </section>
  );
}

/** One endpoint: enable, disable, test, delete; its deliveries with their attempts, and retry of a failed one. */
export function WebhookView() {
  const { params } = useRoute();
  const { route } = useLocation();
  const id = params['id'];
  const hook = useLoad(() => api.GET('/v1/webhooks/{id}', { params: { path: { id } } }), [id]);
  const deliveries = useLoad(() => api.GET('/v1/webhooks/{id}/deliveries', { params: { path: { id }, query: { limit: 100 } } }), [id]);
  const act = useAction();
  const refresh = () => Promise.all([hook.reload(), deliveries.reload()]);
  // Deliveries under way change by themselves (attempts, retries): the log follows them.
  useRefreshWhile((deliveries.data?.data ?? []).some((d) => d.state === 'pending'), deliveries.reload);
  return (
    <section aria-labelledby="webhook-title">
      <p class="crumbs">
        <a href="/console/admin/webhooks">Webhooks</a> /
      </p>
      <Loaded load={hook} what="the webhook">
        {(w) => {
          return (
            <>
              <PageHead title={w.url} id="webhook-title">
                <Allowed to="webhooks.manage">
                <button type="button" class="secondary" onClick={async () => { await act.run(() => api.POST('/v1/webhooks/{id}:test', { params: { path: { id } } })); await refresh(); }}>
                  Send a test event
                </button>
                <button
                  type="button"
                  class="secondary"
                  onClick={async () => {
                    await act.run(() => api.PATCH('/v1/webhooks/{id}', { params: { path: { id }, header: ifMatch(w.etag) }, body: { enabled: w.state !== 'enabled' } }));
                    await refresh();
                  }}
                >
                  {w.state === 'enabled' ? 'Disable' : 'Enable'}
                </button>
                <ConfirmButton
                  label="Delete"
                  title="Delete this webhook?"
                  danger
                  body={<p>No more deliveries are sent to {w.url}; its delivery log goes with it.</p>}
                  onConfirm={async () => {
                    const res = await act.run(() => api.DELETE('/v1/webhooks/{id}', { params: { path: { id }, header: ifMatch(w.etag) } }));
                    if (res.ok) route('/console/admin/webhooks');
                    else await refresh();
                  }}
                />
                </Allowed>
              </PageHead>
              <p>
                <Badge value={w.state} /> {w.disabled_reason && <span class="muted">{w.disabled_reason}</span>}
              </p>
              <p class="muted">{w.description ?? 'No description'} · events: {w.event_types.join(', ')}</p>
            </>
          );
        }}
      </Loaded>
      {act.error ? <p role="alert" class="error">{messageOf(act.error)}</p> : null}
      <h2>Deliveries</h2>
      <Loaded load={deliveries} what="deliveries">
        {(page) => {
          const rows = page.data;
          if (rows.length === 0) return <p class="empty">Nothing sent yet. “Send a test event” sends one now.</p>;
          return (
            <Table
              label="Deliveries"
              rows={rows}
              rowKey={(d) => d.id}
              columns={[
                { header: 'Event', cell: (d) => <>{d.event_type} <span class="muted"><Time at={d.created_at} /></span></> },
                { header: 'State', cell: (d) => <Badge value={d.state} /> },
                { header: 'Attempts', cell: (d) => d.attempts },
                { header: 'Last answer', cell: (d) => d.last_status ?? d.last_error ?? '—' },
                { header: 'Next attempt', cell: (d) => <Time at={d.next_attempt_at} /> },
                {
                  header: 'Actions',
                  quiet: true,
                  cell: (d) =>
                    d.state === 'failed' && (
                      <button
                        type="button"
                        class="secondary"
                        onClick={async () => {
                          await act.run(() => api.POST('/v1/webhooks/{id}/deliveries/{did}:retry', { params: { path: { id, did: d.id } } }));
                          await deliveries.reload();
                        }}
                      >
                        Retry
                      </button>
                    ),
                },
              ]}
            />
          );
        }}
      </Loaded>
    </section>
  );
}
