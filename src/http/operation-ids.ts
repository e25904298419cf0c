import type { FastifyInstance } from 'fastify';

/**
 * Every operation's `operationId` (what generators name methods after), derived from its method
 * and path by one rule unless the route names its own: the verb (`list` for a GET answering
 * `{data: [...]}`, `get`, `create`, `update`, `replace`, `delete`, or a custom method's own
 * verb), then the path's words, singular but for the last of a list:
 * `GET /v1/dashboards/{id}/revisions` -> `listDashboardRevisions`,
 * `POST /v1/dashboards/{id}/revisions/{revision_id}:restore` -> `restoreDashboardRevision`.
 * A test checks they are unique.
 */
/** Where the rule's name reads worse than a chosen one (not a list, not a resource, a protocol step). */
const CHOSEN: Record<string, string> = {
  'GET /healthz': 'checkLiveness',
  'GET /readyz': 'checkReadiness',
  'GET /metrics': 'getPrometheusMetrics',
  'GET /.well-known/oauth-authorization-server': 'getAuthorizationServerMetadata',
  'GET /v1/workspaces/{id}/quotas': 'getWorkspaceQuotas',
  'DELETE /v1/sessions/current': 'deleteCurrentSession',
  'GET /v1/auth/providers': 'getAuthProviders',
  'GET /v1/auth/oidc/start': 'startOidcSignIn',
  'GET /v1/auth/oidc/callback': 'finishOidcSignIn',
  'POST /v1/setup': 'setUp',
  'GET /v1/notifications/stream': 'streamNotifications',
  'PATCH /v1/notifications/{id}/read': 'readNotification',
  'GET /v1/compute/suspensions': 'listComputeSuspensions',
  'GET /v1/renders/{id}/files': 'getRenderFiles',
  'GET /v1/installs/{id}/repository.git/info/refs': 'gitInfoRefs',
  'POST /v1/installs/{id}/repository.git/git-upload-pack': 'gitUploadPack',
  'POST /v1/oauth/device_authorization': 'createDeviceAuthorization',
  'POST /v1/oauth/device/approve': 'approveDeviceAuthorization',
  'POST /v1/oauth/device/deny': 'denyDeviceAuthorization',
};

export function assignOperationIds(app: FastifyInstance<any, any, any, any, any>): void {
  app.addHook('onRoute', (route) => {
    const schema = route.schema as (Record<string, unknown> & { hide?: boolean; operationId?: string; response?: Record<string, unknown> }) | undefined;
    if (!schema || schema.hide || schema.operationId || route.url === '/docs' || route.url.startsWith('/docs/')) return;
    const method = (Array.isArray(route.method) ? route.method[0] : route.method) as string;
    if (method === 'HEAD') return;
    const path = documentPath(route.url);
    route.schema = { ...schema, operationId: CHOSEN[`${method} ${path}`] ?? operationIdOf(method, path, answersList(schema.response?.['200'])) };
  });
}

/** Fastify's path syntax (`:id(^[^:]+)::reset`) as the document writes it (`{id}:reset`). */
export function documentPath(url: string): string {
  return url.replace(/:([A-Za-z_][A-Za-z0-9_]*)(\([^)]*\))?/g, (m, name: string, _re: string | undefined, offset: number, whole: string) =>
    whole[offset - 1] === ':' ? m : `{${name}}`,
  ).replace(/::/g, ':');
}

const answersList = (schema: unknown): boolean => {
  const data = (schema as { properties?: { data?: { type?: string } } } | undefined)?.properties?.data;
  return data?.type === 'array';
};

const VERB: Record<string, string> = { POST: 'create', PATCH: 'update', PUT: 'replace', DELETE: 'delete' };
/** Words that end in s without being plurals. */
const NOT_PLURAL = new Set(['series', 'status', 'access', 'refs']);

function singular(word: string): string {
  if (NOT_PLURAL.has(word)) return word;
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

const pascal = (word: string) =>
  word
    .split(/[_\-.]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');

export function operationIdOf(method: string, path: string, list: boolean): string {
  const segments = path.replace(/^\/v1(?=\/)/, '').split('/').filter(Boolean);
  let custom: string | undefined;
  const last = segments.at(-1) ?? '';
  const colon = last.indexOf(':', last.startsWith('{') ? last.indexOf('}') : 0);
  if (colon > 0) {
    custom = last.slice(colon + 1);
    segments[segments.length - 1] = last.slice(0, colon);
  }
  const words = segments.filter((s) => !s.startsWith('{'));
  const verb = custom ?? (method === 'GET' ? (list ? 'list' : 'get') : VERB[method] ?? method.toLowerCase());
  const noun = words.map((w, i) => (i === words.length - 1 && verb === 'list' ? w : singular(w)));
  const first = verb.split(/[_\-]/).map((w, i) => (i === 0 ? w : pascal(w))).join('');
  return `${first}${noun.map(pascal).join('')}`;
}
