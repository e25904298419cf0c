import { useEffect, useState } from 'preact/hooks';
// Named Notice here: `Notification` is also the browser's (the Notifications API).
import type { Notification as Notice } from '@workspace-platform/sdk';
import { api, messageOf } from '../api.js';

/**
 * The caller's unread notifications, kept live by the notification stream (Server-Sent Events):
 * a notice made anywhere shows at once, the browser reconnecting with Last-Event-ID by itself.
 */
export function useInbox(signedIn: boolean) {
  const [notices, setNotices] = useState<Notice[]>([]);
  useEffect(() => {
    if (!signedIn) return;
    // The stream first, the list once it is open: a notice made in between is in one or the
    // other (the stream sends what is made after it connects), and both are merged by id.
    const stream = new EventSource('/v1/notifications/stream', { withCredentials: true });
    const merge = (incoming: Notice[]) =>
      setNotices((all) => {
        const known = new Map(all.map((n) => [n.id, n]));
        for (const n of incoming) known.set(n.id, known.get(n.id) ?? n);
        return [...known.values()].sort((a, b) => (a.id < b.id ? 1 : -1));
      });
    // An event's data is the notification as the list gives it (src/notifications/stream.ts writes toNotification).
    stream.addEventListener('notification', (e) => merge([JSON.parse((e as MessageEvent<string>).data) as Notice]));
    let listed = false;
    const list = () => {
      if (listed) return;
      listed = true;
      void api.GET('/v1/notifications', { params: { query: { limit: 50 } } }).then((res) => res.data && merge(res.data.data));
    };
    stream.addEventListener('open', list);
    // A stream refused for good (one tab past WSP_STREAMS_PER_USER: 429) still shows the list, without live updates.
    stream.addEventListener('error', () => {
      if (stream.readyState === EventSource.CLOSED) list();
    });
    return () => stream.close();
  }, [signedIn]);
  const markRead = async (id: string) => {
    const res = await api.PATCH('/v1/notifications/{id}/read', { params: { path: { id } } });
    if (res.error) throw new Error(messageOf(res.error));
    setNotices((all) => all.map((n) => (n.id === id ? { ...n, read_at: Math.floor(Date.now() / 1000) } : n)));
  };
  return { notices, unread: notices.filter((n) => n.read_at === null).length, markRead };
}

export function InboxLink({ unread }: { unread: number }) {
  return (
    <a class="inbox" href="/console/notifications" aria-label={`Notifications, ${unread} unread`}>
      Notifications
      {unread > 0 && (
        <span class="badge" aria-hidden="true">
          {unread}
        </span>
      )}
    </a>
  );
}

export function Notifications({ inbox }: { inbox: ReturnType<typeof useInbox> }) {
  const [error, setError] = useState<string | null>(null);
  return (
    <section aria-labelledby="notifications-title">
      <h1 id="notifications-title">Notifications</h1>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {inbox.notices.length === 0 && <p class="empty">Nothing yet: expiry notices, disabled webhooks and the like arrive here as they happen.</p>}
      <ul class="notices">
        {inbox.notices.map((n) => (
          <li key={n.id} class={n.read_at === null ? 'unread' : 'read'}>
            <strong>{n.title}</strong>
            <p>{n.body}</p>
            {n.read_at === null ? (
              <button type="button" onClick={() => inbox.markRead(n.id).catch((e: Error) => setError(e.message))} aria-label={`Mark “${n.title}” read`}>
                Mark read
              </button>
            ) : (
              <span class="muted">Read</span>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
