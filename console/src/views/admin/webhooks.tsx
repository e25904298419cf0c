import { useContext, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Schemas } from '@workspace-platform/sdk';
import { useLocation, useRoute } from 'preact-iso';
import { api, messageOf } from '../../api.js';
import { explainConflict, ifMatch } from '../../conflict.js';
import { SessionContext } from '../../session.js';
import { ACCOUNT_EVENT_TYPES, EVENT_TYPES, EVENT_TYPE_NAMES, type EventType } from '../../../../src/events/event-type-schemas.js';
import { Allowed, Badge, ConfirmButton, Field, FormError, inputProps, Loaded, PageHead, ShownOnce, Table, Time } from '../../components.js';
import { fieldErrors } from '../../format.js';
import { useAction, useLoad, useRefreshWhile } from '../../hooks.js';

/** What an endpoint may take (the request body's `event_types` items): an event type or `<resource>.*`. */
type EventFilter = Schemas['CreateWebhookBody']['event_types'][number];

// Sign-ins, sessions and device approvals belong to no workspace, so they reach no webhook
// (docs/spec-gaps.md, "Webhooks"): offering them would offer a subscription that never fires.
const ACCOUNT: readonly string[] = ACCOUNT_EVENT_TYPES;
const WEBHOOK_TYPES = EVENT_TYPE_NAMES.filter((t) => !ACCOUNT.includes(t));
/** `<resource>.*` for every resource with a webhook event: what `wsp webhooks create --events install.*` takes. */
const WILDCARDS = [...new Set(WEBHOOK_TYPES.map((t) => `${t.slice(0, t.indexOf('.'))}.*`))];

/** The URL field's hint: the rules of this server, as its operator set them (GET /v1/webhooks `url_policy`). */
function urlHint(policy: Schemas['WebhookList']['url_policy'] | undefined): string {
  if (!policy) return 'Checking what this server accepts…';
  const scheme = policy.allow_http ? 'https or http (this server allows plain http)' : 'https only (this server refuses plain http)';
  const where = policy.allow_private ? 'any address, private and loopback ones too' : 'a public address: private, loopback and link-local ones are refused, also when a name resolves to one';
  return `${scheme}; ${where}.`;
}

/** A multiple select of event types, `<resource>.*` first; `extra`: values already subscribed that it would not offer. */
function EventsSelect({ name, value, onChange, error }: { name: string; value: string[]; onChange: (v: string[]) => void; error: string | undefined }) {
  const extra = value.filter((v) => !WILDCARDS.includes(v) && !WEBHOOK_TYPES.includes(v as EventType));
  return (
    <select multiple size={10} {...inputProps(name, error)} onChange={(e) => onChange([...(e.target as HTMLSelectElement).selectedOptions].map((o) => o.value))}>
      <optgroup label="Every event of a resource">
        {WILDCARDS.map((t) => (
          <option key={t} value={t} selected={value.includes(t)}>
            {t}
          </option>
        ))}
      </optgroup>
      <optgroup label="One event type">
        {WEBHOOK_TYPES.map((t) => (
          <option key={t} value={t} selected={value.includes(t)} title={EVENT_TYPES[t]}>
            {t}
          </option>
        ))}
        {extra.map((t) => (
          <option key={t} value={t} selected>
            {t}
          </option>
        ))}
      </optgroup>
    </select>
  );
}

/** Webhook endpoints, and a new one: its signing secret shown once, and a test event sent to it at once. */
export function WebhooksView() {
  const me = useContext(SessionContext);
  const load = useLoad(() => api.GET('/v1/webhooks', { params: { query: { limit: 100 } } }), [me?.workspace?.id]);
  const create = useAction();
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [types, setTypes] = useState<string[]>([]);
  const [ping, setPing] = useState(true);
  const [made, setMade] = useState<{ hook: Schemas['CreatedWebhook']; test: Schemas['Delivery'] | null; testError: unknown } | null>(null);
  const errors = fieldErrors(create.error);
  const submit = async (e: Event) => {
    e.preventDefault();
    const res = await create.run(() => api.POST('/v1/webhooks', { body: { url, event_types: types as EventFilter[], ...(description ? { description } : {}) } }));
    if (res.ok && res.data) {
      const hook = res.data;
      // The ping: the same `webhook.tested` event as `wsp webhooks test`, so a receiver that does
      // not answer is found now rather than at the first real event.
      const test = ping ? await api.POST('/v1/webhooks/{id}:test', { params: { path: { id: hook.id } } }).catch((error: unknown) => ({ data: undefined, error })) : null;
      setMade({ hook, test: test?.data ?? null, testError: test?.error ?? null });
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
        <ShownOnce value={made.hook.secret} label="Signing secret" copyLabel="Copy secret" onDone={() => setMade(null)}>
          The signing secret of <strong>{made.hook.url}</strong>. Copy it now: it is not shown again. Receivers verify each delivery with it (Standard Webhooks).{' '}
          {made.test && (
            <>
              A test event (webhook.tested) is on its way: <a href={`/console/admin/webhooks/${made.hook.id}`}>see how its delivery went</a>.
            </>
          )}
          {made.testError ? <span class="error">The test event could not be sent: {messageOf(made.testError)}</span> : null}
        </ShownOnce>
      )}
      <Loaded load={load} what="webhooks">
        {(page) => {
          const rows = page.data;
          if (rows.length === 0) return <p class="empty">No webhooks. Add an endpoint below to be told of changes as they happen.</p>;
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
          <Field label="URL" name="webhook-url" error={errors['url']} hint={urlHint(load.data?.url_policy)}>
            <input type="url" {...inputProps('webhook-url', errors['url'])} value={url} onInput={(e) => setUrl((e.target as HTMLInputElement).value)} />
          </Field>
          <Field label="Description (optional)" name="webhook-description" error={errors['description']}>
            <input {...inputProps('webhook-description', errors['description'])} value={description} onInput={(e) => setDescription((e.target as HTMLInputElement).value)} />
          </Field>
          <Field label="Events" name="webhook-events" error={errors['event_types']} hint="install.* takes every event of installs, as the CLI's --events does. Ctrl or ⌘ to choose several.">
            <EventsSelect name="webhook-events" value={types} onChange={setTypes} error={errors['event_types']} />
          </Field>
          <label>
            <input type="checkbox" checked={ping} onChange={(e) => setPing((e.target as HTMLInputElement).checked)} /> Send a test event once it is added
          </label>
          <FormError error={create.error} fields={['url', 'description', 'event_types']} />
          <div class="actions">
            <button type="submit" disabled={create.busy}>
              Add webhook
            </button>
          </div>
        </form>
      </Allowed>
    </section>
  );
}

/** The endpoint's URL, events and description, changed with If-Match; a lost race says so and offers the other version. */
function EditWebhook({ w, reload, saved, onSaved }: { w: Schemas['Webhook']; reload: () => Promise<unknown>; saved: boolean; onSaved: (etag: string) => void }) {
  const [url, setUrl] = useState(w.url);
  const [types, setTypes] = useState<string[]>(w.event_types);
  const [description, setDescription] = useState(w.description ?? '');
  const [unchanged, setUnchanged] = useState(false);
  const save = useAction();
  const alert = useRef<HTMLParagraphElement>(null);
  const conflict = explainConflict(save.error, 'webhook', 'change');
  const errors = conflict ? {} : fieldErrors(save.error);
  useLayoutEffect(() => {
    if (conflict) alert.current?.focus();
  }, [conflict]);
  const submit = async (e: Event) => {
    e.preventDefault();
    setUnchanged(false);
    const same = (a: string[], b: string[]) => a.length === b.length && a.every((x) => b.includes(x));
    // Only what changed is sent: a field left alone is not rewritten over someone else's change.
    const body = {
      ...(url !== w.url ? { url } : {}),
      ...(!same(types, w.event_types) ? { event_types: types as EventFilter[] } : {}),
      ...(description !== (w.description ?? '') ? { description: description === '' ? null : description } : {}),
    };
    if (Object.keys(body).length === 0) return setUnchanged(true);
    const res = await save.run(() => api.PATCH('/v1/webhooks/{id}', { params: { path: { id: w.id }, header: ifMatch(w.etag) }, body }));
    // The page keys this form by the etag, so the reload remakes it: the page keeps "saved".
    if (res.ok && res.data) {
      onSaved(res.data.etag);
      await reload();
    }
  };
  return (
    <form class="card form" onSubmit={submit} aria-labelledby="edit-webhook" noValidate>
      <h2 id="edit-webhook">Change the endpoint</h2>
      <Field label="URL" name="edit-url" error={errors['url']}>
        <input type="url" {...inputProps('edit-url', errors['url'])} value={url} onInput={(e) => setUrl((e.target as HTMLInputElement).value)} />
      </Field>
      <Field label="Description" name="edit-description" error={errors['description']}>
        <input {...inputProps('edit-description', errors['description'])} value={description} onInput={(e) => setDescription((e.target as HTMLInputElement).value)} />
      </Field>
      <Field label="Events" name="edit-events" error={errors['event_types']}>
        <EventsSelect name="edit-events" value={types} onChange={setTypes} error={errors['event_types']} />
      </Field>
      {conflict && (
        <div class="card">
          <p role="alert" class="error" tabIndex={-1} ref={alert}>
            Someone else changed this webhook after you opened it, so your change was not saved.
          </p>
          <div class="actions">
            {/* The page keys this form by the etag: reloading shows their version in the form. */}
            <button type="button" class="secondary" onClick={() => void reload()}>
              Reload their version
            </button>
          </div>
        </div>
      )}
      {!conflict && <FormError error={save.error} fields={['url', 'description', 'event_types']} />}
      {saved && !save.error && !unchanged && <p role="status">Saved.</p>}
      {unchanged && <p role="status">Nothing changed.</p>}
      <div class="actions">
        <button type="submit" disabled={save.busy}>
          Save changes
        </button>
      </div>
    </form>
  );
}

type Attempt = Schemas['WebhookDeliveryAttempt'];

/** Headers as they went over the wire, one per line. */
const headerLines = (headers: { name: string; value: string }[]) => headers.map((x) => `${x.name}: ${x.value}`).join('\n');

/** One attempt: its outcome in the summary; opened, the request and the response as the server kept them. */
function AttemptItem({ a }: { a: Attempt }) {
  const outcome = a.response ? `${a.response.status}` : 'no answer';
  return (
    <li>
      <details class="attempt">
        <summary>
          Attempt {a.number} · <Time at={a.started_at} /> · {a.duration_ms} ms · <strong>{outcome}</strong>
          {a.error && <span class="muted"> · {a.error}</span>}
        </summary>
        <h5>Request</h5>
        <p>
          {a.request.method} <code>{a.request.url}</code>
        </p>
        <pre class="source" aria-label={`Attempt ${a.number} request headers`}>
          {headerLines(a.request.headers)}
        </pre>
        {a.request.body === null ? (
          <p class="muted">The body is an audit event: it is shown to those who may read the audit log.</p>
        ) : (
          <pre class="source" aria-label={`Attempt ${a.number} request body`}>
            {a.request.body}
          </pre>
        )}
        {a.request.body_truncated && <p class="muted">Only the body's first 16 KiB are shown.</p>}
        <h5>Response</h5>
        {a.response ? (
          <>
            <p>Status {a.response.status}</p>
            <pre class="source" aria-label={`Attempt ${a.number} response headers`}>
              {headerLines(a.response.headers)}
            </pre>
            {a.response.headers_truncated && <p class="muted">Only the first 50 headers are kept, each up to 1,024 characters.</p>}
            {a.response.body === '' ? (
              <p class="muted">An empty body.</p>
            ) : (
              <pre class="source" aria-label={`Attempt ${a.number} response body`}>
                {a.response.body}
              </pre>
            )}
            {a.response.body_truncated && <p class="muted">Only the body's first 4 KiB are kept.</p>}
          </>
        ) : (
          <p>No HTTP answer: {a.error}</p>
        )}
      </details>
    </li>
  );
}

/** A delivery: what it sends and how it stands, and each attempt's request and response. */
function DeliveryDetail({ d, hookId, url }: { d: Schemas['Delivery']; hookId: string; url: string }) {
  // Read again whenever the delivery's list shows another attempt made.
  const attempts = useLoad(
    () => api.GET('/v1/webhooks/{id}/deliveries/{did}/attempts', { params: { path: { id: hookId, did: d.id }, query: { limit: 100 } } }),
    [hookId, d.id, d.attempts, d.last_attempt_at],
  );
  return (
    <section class="card" aria-labelledby={`delivery-${d.id}`}>
      <h3 id={`delivery-${d.id}`}>Delivery {d.id}</h3>
      <h4>Request</h4>
      <dl class="facts">
        <dt>Sent to</dt>
        <dd>
          POST <code>{url}</code>
        </dd>
        <dt>webhook-id</dt>
        <dd>
          <code>{d.event_id}</code> (the event; receivers dedupe on it)
        </dd>
        <dt>Event</dt>
        <dd>{d.event_type}</dd>
        <dt>Body</dt>
        <dd>The event as JSON, in the audit log's form, signed in webhook-signature</dd>
        <dt>Queued</dt>
        <dd>
          <Time at={d.created_at} />
        </dd>
      </dl>
      <h4>Response</h4>
      <dl class="facts">
        <dt>Attempts</dt>
        <dd>{d.attempts}</dd>
        <dt>Last attempt</dt>
        <dd>
          <Time at={d.last_attempt_at} />
        </dd>
        <dt>Last status</dt>
        <dd>{d.last_status ?? (d.attempts > 0 ? 'no HTTP answer' : '—')}</dd>
        <dt>Last error</dt>
        <dd>{d.last_error ?? '—'}</dd>
        <dt>Next attempt</dt>
        <dd>
          <Time at={d.next_attempt_at} />
        </dd>
      </dl>
      <h4>Each attempt</h4>
      <Loaded load={attempts} what="the attempts">
        {(page) =>
          page.data.length === 0 ? (
            <p class="empty">No attempt recorded yet.</p>
          ) : (
            <ol class="attempts" aria-label="Attempts">
              {page.data.map((a) => (
                <AttemptItem key={a.number} a={a} />
              ))}
            </ol>
          )
        }
      </Loaded>
    </section>
  );
}

/** One endpoint: enable, disable, test, change, delete; its deliveries with their last answer, and retry of any. */
export function WebhookView() {
  const { params } = useRoute();
  const { route } = useLocation();
  const id = params['id'];
  const hook = useLoad(() => api.GET('/v1/webhooks/{id}', { params: { path: { id } } }), [id]);
  const deliveries = useLoad(() => api.GET('/v1/webhooks/{id}/deliveries', { params: { path: { id }, query: { limit: 100 } } }), [id]);
  const act = useAction();
  const [open, setOpen] = useState<string | null>(null);
  const [savedEtag, setSavedEtag] = useState<string | null>(null);
  const refresh = () => Promise.all([hook.reload(), deliveries.reload()]);
  // Deliveries under way change by themselves (attempts, retries): the log follows them.
  useRefreshWhile(
    (deliveries.data?.data ?? []).some((d) => d.state === 'pending'),
    deliveries.reload,
  );
  const shown = (deliveries.data?.data ?? []).find((d) => d.id === open);
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
                  <button
                    type="button"
                    class="secondary"
                    onClick={async () => {
                      await act.run(() => api.POST('/v1/webhooks/{id}:test', { params: { path: { id } } }));
                      await refresh();
                    }}
                  >
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
              <p class="muted">
                {w.description ?? 'No description'} · events: {w.event_types.join(', ')}
              </p>
              <Allowed to="webhooks.manage">
                <EditWebhook key={w.etag} w={w} reload={hook.reload} saved={savedEtag === w.etag} onSaved={setSavedEtag} />
              </Allowed>
            </>
          );
        }}
      </Loaded>
      {act.error ? (
        <p role="alert" class="error">
          {explainConflict(act.error, 'webhook', 'change') ?? messageOf(act.error)}
        </p>
      ) : null}
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
                {
                  header: 'Event',
                  cell: (d) => (
                    <>
                      {d.event_type}{' '}
                      <span class="muted">
                        <Time at={d.created_at} />
                      </span>
                    </>
                  ),
                },
                { header: 'State', cell: (d) => <Badge value={d.state} /> },
                { header: 'Attempts', cell: (d) => d.attempts },
                { header: 'Last answer', cell: (d) => d.last_status ?? d.last_error ?? '—' },
                { header: 'Next attempt', cell: (d) => <Time at={d.next_attempt_at} /> },
                {
                  header: 'Actions',
                  quiet: true,
                  cell: (d) => (
                    <span class="actions">
                      <button
                        type="button"
                        class="secondary"
                        aria-expanded={open === d.id}
                        aria-controls={open === d.id ? `delivery-${d.id}` : undefined}
                        onClick={() => setOpen(open === d.id ? null : d.id)}
                      >
                        Details
                      </button>
                      {/* Any state: a delivery that succeeded may be wanted again (a receiver that lost it). */}
                      <Allowed to="webhooks.manage">
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
                      </Allowed>
                    </span>
                  ),
                },
              ]}
            />
          );
        }}
      </Loaded>
      {shown && hook.data && <DeliveryDetail d={shown} hookId={hook.data.id} url={hook.data.url} />}
    </section>
  );
}
