import { render } from 'preact';
import { createContext } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';
import { LocationProvider, Router, Route, useLocation } from 'preact-iso';
import { api, currentWorkspace, messageOf, setCsrfToken, setWorkspace } from './api.js';
import { SignIn } from './views/sign-in.js';
import { Dashboards } from './views/dashboards.js';
import { NotFound } from './views/not-found.js';
import { InboxLink, Notifications, useInbox } from './views/notifications.js';
import './styles.css';

export interface Me {
  user: { id: string; name: string | null; email: string | null } | null;
  workspace: { id: string; name: string } | null;
  role: string | null;
}

type Workspace = { id: string; name: string; role: string | null };

/** The signed-in caller, for the views the router renders (they re-render when it changes). */
export const SessionContext = createContext<Me | null>(null);

/** The inbox, shared by the header's badge and the notifications view. */
export const InboxContext = createContext<ReturnType<typeof useInbox> | null>(null);

function NotificationsView() {
  const inbox = useContext(InboxContext);
  return inbox ? <Notifications inbox={inbox} /> : null;
}

function DashboardsView() {
  const me = useContext(SessionContext);
  return <Dashboards workspace={me?.workspace ?? null} />;
}

/** Who is signed in, and the workspaces they can switch between; null while unknown or signed out. */
function useSession() {
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const [workspaces, setWorkspaces] = useState<Workspace[]>([]);
  const load = async () => {
    const who = await api.GET('/v1/me', {});
    if (!who.data) {
      setCsrfToken(null);
      return setMe(null);
    }
    setCsrfToken(who.data.csrf_token ?? null);
    const list = await api.GET('/v1/workspaces', {});
    const all = (list.data?.data ?? []) as Workspace[];
    setWorkspaces(all);
    if (!currentWorkspace() || !all.some((w) => w.id === currentWorkspace())) setWorkspace(all[0]?.id ?? null);
    const inWorkspace = await api.GET('/v1/me', {});
    setMe((inWorkspace.data as Me | undefined) ?? (who.data as Me));
  };
  return { me, workspaces, load, signedOut: () => setMe(null) };
}

function Shell() {
  const session = useSession();
  const location = useLocation();
  const inbox = useInbox(Boolean(session.me));
  const [error, setError] = useState<string | null>(null);
  useEffect(() => void session.load(), []);

  useEffect(() => {
    if (session.me === null && location.path !== '/console/sign-in') location.route('/console/sign-in');
  }, [session.me, location.path]);

  const signOut = async () => {
    const res = await api.DELETE('/v1/sessions/current', {});
    if (res.error) return setError(messageOf(res.error));
    setWorkspace(null);
    session.signedOut();
  };

  if (session.me === undefined) return <p class="loading" role="status">Loading…</p>;
  if (session.me === null) {
    return (
      <main>
        <SignIn onSignedIn={async () => { await session.load(); location.route('/console/dashboards'); }} />
      </main>
    );
  }
  return (
    <>
      <header class="bar">
        <a class="brand" href="/console/dashboards">Workspace Platform</a>
        <label class="switch">
          <span>Workspace</span>
          <select
            aria-label="Workspace"
            value={currentWorkspace() ?? ''}
            onChange={async (e) => {
              setWorkspace((e.target as HTMLSelectElement).value);
              await session.load();
            }}
          >
            {session.workspaces.map((w) => (
              <option value={w.id} key={w.id}>{w.name}</option>
            ))}
          </select>
        </label>
        <InboxLink unread={inbox.unread} />
        <span class="who">{session.me.user?.email}</span>
        <button type="button" onClick={signOut}>Sign out</button>
      </header>
      {error && <p role="alert" class="error">{error}</p>}
      <main>
        <SessionContext.Provider value={session.me}>
          <InboxContext.Provider value={inbox}>
            <Router>
              <Route path="/console/" component={ToDashboards} />
              <Route path="/console/sign-in" component={ToDashboards} />
              <Route path="/console/dashboards" component={DashboardsView} />
              <Route path="/console/notifications" component={NotificationsView} />
              <Route default component={NotFound} />
            </Router>
          </InboxContext.Provider>
        </SessionContext.Provider>
      </main>
    </>
  );
}

function ToDashboards() {
  const { route } = useLocation();
  useEffect(() => route('/console/dashboards', true), []);
  return null;
}

render(
  <LocationProvider>
    <Shell />
  </LocationProvider>,
  document.getElementById('app')!,
);
