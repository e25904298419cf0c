/**
 * Token scopes (CONTRACT §12): what a workspace API token may do. A token made without
 * `scopes` holds every one; `:write` implies `:read` of its area; `secrets:access` (reading
 * payloads) is never implied. Sessions and JWTs act for a user and have no scopes: their role
 * decides.
 */
import { TOKEN_SCOPES, type TokenScope } from './scope-schemas.js';

export { TOKEN_SCOPES, type TokenScope };

/** Whether a token's scopes (null: all) allow what a route needs. */
export function grants(granted: readonly string[] | null, required: TokenScope): boolean {
  if (granted === null || granted.includes(required)) return true;
  return required.endsWith(':read') && granted.includes(`${required.slice(0, -':read'.length)}:write`);
}

/** The area each route tag belongs to; a tag not here needs no scope (workspaces, operations, quotas...). */
const AREA_OF_TAG: Record<string, string> = {
  dashboards: 'dashboards',
  snippets: 'dashboards',
  platform_metrics: 'dashboards',
  secrets: 'secrets',
  installs: 'installs',
  packages: 'installs',
  compute: 'compute',
  tokens: 'tokens',
  audit: 'audit',
  webhooks: 'webhooks',
};

const READ_METHODS = new Set(['GET', 'HEAD']);

/**
 * The scope a workspace route needs of an API token, from its tag and method: a read for GET,
 * a write otherwise. A route whose need differs says so in its config (`tokenScope`).
 */
export function scopeOfRoute(tags: readonly string[], methods: readonly string[]): TokenScope | null {
  const area = tags.map((t) => AREA_OF_TAG[t]).find((a) => a !== undefined);
  if (!area) return null;
  const scope = `${area}:${methods.every((m) => READ_METHODS.has(m)) ? 'read' : 'write'}`;
  return (TOKEN_SCOPES as readonly string[]).includes(scope) ? (scope as TokenScope) : null;
}

/** Stored form: sorted, space-separated; null for all. */
export const storedScopes = (scopes: readonly TokenScope[] | undefined): string | null => (scopes === undefined ? null : [...new Set(scopes)].sort().join(' '));

export const parseStoredScopes = (stored: string | null): TokenScope[] | null =>
  stored === null ? null : (stored.split(' ').filter((s) => s !== '') as TokenScope[]);
