import { render } from 'preact';
import { createContext } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';
import { LocationProvider, Router, Route, useLocation } from 'preact-iso';
import type { Workspace } from '@workspace-platform/sdk';
import { api, currentWorkspace, messageOf, setCsrfToken, setWorkspace } from './api.js';
import { SessionContext, can, type Me, type Permission } from './session.js';
import { SignIn } from './views/sign-in.js';
import { FirstRun } from './views/first-run.js';
import { NotFound } from './views/not-found.js';
import { InboxLink, Notifications, useInbox } from './views/notifications.js';
import { DashboardsView } from './views/dashboards/list.js';
import { DashboardView } from './views/dashboards/dashboard.js';
import { EditDashboardView } from './views/dashboards/edit.js';
import { RevisionsView } from './views/dashboards/revisions.js';
import { RevisionView } from './views/dashboards/diff.js';
import { SecretsView } from './views/secrets/list.js';
import { SecretView } from './views/secrets/secret.js';
import { PackagesView, PackageView } from './views/installs/packages.js';
import { InstallsView, InstallView } from './views/installs/installs.js';
import { ChangesView } from './views/installs/changes.js';
import { ChangeRequestView } from './views/installs/change-request.js';
import { ComputeView } from './views/compute/configs.js';
import { MachinesView } from './views/compute/machines.js';
import { ClustersView, ClusterView } from './views/compute/clusters.js';
import { MembersView } from './views/admin/members.js';
import { TokensView } from './views/admin/tokens.js';
import { WebhooksView, WebhookView } from './views/admin/webhooks.js';
import { AuditView } from './views/admin/audit.js';
import { SessionsView } from './views/account/sessions.js';
import { MyEventsView } from './views/account/events.js';
import { AcceptInvitation } from './views/invite.js';
import './styles.css';

/** The inbox, shared by the header's badge and the notifications view. */
export const InboxContext = createContext<ReturnType<typeof useInbox> | null>(null);

function NotificationsView() {
  const inbox = useContext(InboxContext);
  return inbox ? <Notifications inbox={inbox} /> : null;
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
    const all = list.data?.data ?? [];
    setWorkspaces(all);
    if (!currentWorkspace() || !all.some((w) => w.id === currentWorkspace())) setWorkspace(all[0]?.id ?? null);
    const inWorkspace = await api.GET('/v1/me', {});
    setMe(inWorkspace.data ?? who.data);
  };
  return { me, workspaces, load, signedOut: () => setMe(null) };
}

/** The areas; `needs`: the permission without which the area's page would answer 403 (GET /v1/me). */
const AREAS: { href: string; label: string; needs?: Permission; section?: string }[] = [
  { href: '/console/dashboards', label: 'Dashboards' },
  { href: '/console/secrets', label: 'Secrets' },
  { href: '/console/packages', label: 'Packages' },
  { href: '/console/installs', label: 'Installs' },
  { href: '/console/compute', label: 'Compute' },
  { href: '/console/machines', label: 'Machines' },
  { href: '/console/clusters', label: 'Clusters' },
  { href: '/console/admin/members', label: 'Members' },
  { href: '/console/admin/tokens', label: 'API tokens', needs: 'api_tokens.manage' },
  { href: '/console/admin/webhooks', label: 'Webhooks', needs: 'webhooks.read' },
  { href: '/console/admin/audit', label: 'Audit log', needs: 'audit.read' },
  // The account area's pages (sessions, the security log) all belong to this one entry.
  { href: '/console/account/sessions', label: 'Your sessions', section: '/console/account/' },
];

function Nav({ me }: { me: Me }) {
  const { path } = useLocation();
  return (
    <nav aria-label="Areas" class="nav">
      <ul>
        {AREAS.filter((a) => !a.needs || can(me, a.needs)).map((a) => (
          <li key={a.href}>
            <a href={a.href} aria-current={path === a.href || path.startsWith(`${a.href}/`) || (a.section !== undefined && path.startsWith(a.section)) ? 'page' : undefined}>
              {a.label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** Paths a signed-out visitor may open as they are (the rest send them to sign in, and back after). */
const PUBLIC = ['/console/sign-in', '/console/invite'];

function Shell() {
  const session = useSession();
  const location = useLocation();
  const inbox = useInbox(Boolean(session.me));
  const [error, setError] = useState<string | null>(null);
  useEffect(() => void session.load(), []);
  // Asked only of a signed-out visitor: true while the server has no user (its first run).
  const [firstRun, setFirstRun] = useState<boolean | undefined>(undefined);
  useEffect(() => {
    if (session.me === null && firstRun === undefined) void api.GET('/v1/setup', {}).then((res) => setFirstRun(res.data?.required ?? false));
  }, [session.me]);

  useEffect(() => {
    if (session.me === null && !PUBLIC.includes(location.path)) {
      location.route(`/console/sign-in?next=${encodeURIComponent(location.url)}`, true);
    }
  }, [session.me, location.path]);

  const signOut = async () => {
    const res = await api.DELETE('/v1/sessions/current', {});
    if (res.error) return setError(messageOf(res.error));
    setWorkspace(null);
    session.signedOut();
  };

  if (session.me === undefined)
    return (
      <p class="loading" role="status">
        Loading…
      </p>
    );
  const joined = async (workspaceId: string) => {
    setWorkspace(workspaceId);
    await session.load();
    location.route('/console/dashboards');
  };
  if (session.me === null && location.path === '/console/invite') {
    return (
      <main id="main">
        <AcceptInvitation signedIn={false} onAccepted={joined} />
      </main>
    );
  }
  if (session.me === null && firstRun === undefined)
    return (
      <p class="loading" role="status">
        Loading…
      </p>
    );
  if (session.me === null && firstRun) {
    return (
      <main id="main">
        <FirstRun
          onDone={async (workspaceId) => {
            setFirstRun(false);
            await joined(workspaceId);
          }}
        />
      </main>
    );
  }
  if (session.me === null) {
    const next = landing(location.query['next']);
    return (
      <main id="main">
        <SignIn
          next={next}
          onSignedIn={async () => {
            await session.load();
            location.route(next);
          }}
        />
      </main>
    );
  }
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="bar">
        <a class="brand" href="/console/dashboards">
          Workspace Platform
        </a>
        <label class="switch">
          <span>Workspace</span>
          <select
            aria-label="Workspace"
            value={currentWorkspace() ?? ''}
            onChange={async (e) => {
              setWorkspace((e.target as HTMLSelectElement).value);
              // A resource's page of the old workspace would show it under the new one's name
              // (or say it does not exist): the new workspace's list of the same area instead.
              const area = AREAS.find((a) => location.path.startsWith(`${a.href}/`));
              if (area) location.route(area.href);
              await session.load();
            }}
          >
            {session.workspaces.map((w) => (
              <option value={w.id} key={w.id}>
                {w.name}
              </option>
            ))}
          </select>
        </label>
        <InboxLink unread={inbox.unread} />
        <span class="who">{session.me.user?.email}</span>
        <button type="button" class="secondary" onClick={signOut}>
          Sign out
        </button>
      </header>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <div class="layout">
        <Nav me={session.me} />
        <main id="main">
          <SessionContext.Provider value={session.me}>
            <InboxContext.Provider value={inbox}>
              {/* Keyed by the workspace: a switch remounts the view, so none keeps the old workspace's data. */}
              <Router key={currentWorkspace() ?? ''}>
                <Route path="/console/" component={ToDashboards} />
                <Route path="/console/sign-in" component={ToDashboards} />
                <Route path="/console/dashboards" component={DashboardsView} />
                <Route path="/console/dashboards/:id" component={DashboardView} />
                <Route path="/console/dashboards/:id/edit" component={EditDashboardView} />
                <Route path="/console/dashboards/:id/revisions" component={RevisionsView} />
                <Route path="/console/dashboards/:id/revisions/:rid" component={RevisionView} />
                <Route path="/console/secrets" component={SecretsView} />
                <Route path="/console/secrets/:id" component={SecretView} />
                <Route path="/console/packages" component={PackagesView} />
                <Route path="/console/packages/:id" component={PackageView} />
                <Route path="/console/installs" component={InstallsView} />
                <Route path="/console/installs/:id" component={InstallView} />
                <Route path="/console/installs/:id/changes" component={ChangesView} />
                <Route path="/console/installs/:id/changes/:cr" component={ChangeRequestView} />
                <Route path="/console/compute" component={ComputeView} />
                <Route path="/console/machines" component={MachinesView} />
                <Route path="/console/clusters" component={ClustersView} />
                <Route path="/console/clusters/:id" component={ClusterView} />
                <Route path="/console/admin/members" component={MembersView} />
                <Route path="/console/admin/tokens" component={TokensView} />
                <Route path="/console/admin/webhooks" component={WebhooksView} />
                <Route path="/console/admin/webhooks/:id" component={WebhookView} />
                <Route path="/console/admin/audit" component={AuditView} />
                <Route path="/console/account/sessions" component={SessionsView} />
                <Route path="/console/account/events" component={MyEventsView} />
                <Route path="/console/invite" component={SignedInInvite} />
                <Route path="/console/notifications" component={NotificationsView} />
                <Route default component={NotFound} />
              </Router>
            </InboxContext.Provider>
          </SessionContext.Provider>
        </main>
      </div>
    </>
  );
}

/** An invitation opened while signed in: joining switches to the new workspace. */
function SignedInInvite() {
  return (
    <AcceptInvitation
      signedIn
      onAccepted={async (workspaceId) => {
        setWorkspace(workspaceId);
        window.location.assign('/console/dashboards');
      }}
    />
  );
}

/** Where a signed-in person lands: the `next` they were sent to sign in from, or the dashboards. */
function ToDashboards() {
  const { route, query, url } = useLocation();
  useEffect(() => route(landing(query['next']), true), [url]);
  return null;
}

const landing = (next: unknown) => (typeof next === 'string' && next.startsWith('/console/') && next !== '/console/' && !next.startsWith('/console/sign-in') ? next : '/console/dashboards');

render(
  // Only the console's own addresses are routed here; others (single sign-on, /docs) load as pages.
  <LocationProvider scope="/console/">
    <Shell />
  </LocationProvider>,
  document.getElementById('app')!,
);
