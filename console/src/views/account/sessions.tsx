import { api, messageOf } from '../../api.js';
import { Badge, ConfirmButton, Loaded, PageHead, Time } from '../../components.js';
import { useAction, useLoad } from '../../hooks.js';
import { AccountTabs } from './events.js';

/** The caller's sessions, where they were made and when last used; any but this one can be ended here. */
export function SessionsView() {
  const load = useLoad(() => api.GET('/v1/sessions', {}), []);
  const end = useAction();
  return (
    <section aria-labelledby="sessions-title">
      <PageHead title="Your sessions" id="sessions-title" />
      <AccountTabs current="sessions" />
      {end.error ? (
        <p role="alert" class="error">
          {messageOf(end.error)}
        </p>
      ) : null}
      <Loaded load={load} what="sessions">
        {(page) => (
          <ul class="rows">
            {page.data.map((s) => (
              <li key={s.id}>
                <span>
                  <strong>{s.user_agent ?? 'Unknown client'}</strong> {s.current && <Badge value="this session" tone="good" />}
                  <br />
                  <span class="muted">
                    {s.issued_by} sign-in from {s.ip ?? 'an unknown address'} · started <Time at={s.created_at} /> · last used <Time at={s.last_used_at} /> · ends <Time at={s.expires_at} />
                  </span>
                </span>
                {!s.current && (
                  <ConfirmButton
                    label="End"
                    title="End this session?"
                    body={<p>The browser or CLI using it is signed out at its next request.</p>}
                    onConfirm={async () => {
                      await end.run(() => api.DELETE('/v1/sessions/{id}', { params: { path: { id: s.id } } }));
                      await load.reload();
                    }}
                  />
                )}
              </li>
            ))}
          </ul>
        )}
      </Loaded>
    </section>
  );
}
