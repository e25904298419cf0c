import { TOKEN_SCOPES } from '../auth/scope-schemas.js';
import { Type, type TSchema } from '@sinclair/typebox';
import type { SwaggerOptions } from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { ErrorCodes } from '../shared/errors.js';
import { isNoBodySchema } from './validation.js';
import { IF_NONE_MATCH, NOT_MODIFIED } from './conditional-get.js';
import { packageVersion } from '../shared/package-root.js';
import { finishDocument } from './openapi-document.js';
import { envelopeRef, ErrorEnvelopeSchema, STATUS_TEXT } from './schemas.js';

/** The shared error envelope of the document, described with every code and its status. */
const { $id, additionalProperties, ...envelopeRest } = ErrorEnvelopeSchema;
export const DocumentedErrorEnvelope: TSchema = {
  $id,
  additionalProperties,
  description: `Error codes: ${Object.values(ErrorCodes)
    .map((c) => `${c.code} (${c.status})`)
    .join(', ')}`,
  ...envelopeRest,
};

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The error statuses the request pipeline itself can answer on a route, whatever the route does:
 * - 422 on every route (every route validates at least its query string; src/http/validation.ts)
 *   and 500 (7099) on every route;
 * - 413 and 415 on every route that reads a body (POST, PUT, PATCH, DELETE: a body is parsed
 *   whether or not the route takes one);
 * - on authenticated routes 401, and 429 (failed authentications per address, always on, and
 *   WSP_RATE_LIMIT_PER_MINUTE per credential); 403 where a Service-Context or role is resolved
 *   (`config.scope`); 409 (7031, an Idempotency-Key still in flight) on every such write, since
 *   the pipeline takes an Idempotency-Key on every one;
 * - 507 (7057) on every write that reaches the database: its disk can be full.
 */
export function pipelineStatuses(methods: readonly string[], config: { auth?: string; scope?: string; database?: boolean } | undefined): Map<number, string> {
  const out = new Map<number, string>();
  const writes = methods.some((m) => WRITE_METHODS.has(m));
  const authenticated = config?.auth !== 'none';
  if (authenticated) out.set(401, STATUS_TEXT[401]!);
  if (authenticated && config?.scope) out.set(403, STATUS_TEXT[403]!);
  if (authenticated && config?.scope && writes) out.set(409, 'An earlier request with this Idempotency-Key is still in progress (7031), or took effect with its answer lost to a failure (7055)');
  if (writes) {
    out.set(413, STATUS_TEXT[413]!);
    out.set(415, STATUS_TEXT[415]!);
  }
  out.set(422, STATUS_TEXT[422]!);
  if (authenticated) out.set(429, STATUS_TEXT[429]!);
  out.set(500, STATUS_TEXT[500]!);
  // Every route but the liveness check and the document itself reads the database (credentials
  // first): 7054 while it cannot be reached.
  if (authenticated || config?.database !== false) out.set(503, 'The database cannot be reached right now (7054); retry after Retry-After');
  // A write the database (or the repositories' volume) has no room for: 7057, nothing changed.
  if (writes && (authenticated || config?.database !== false)) out.set(507, STATUS_TEXT[507]!);
  return out;
}

/**
 * What a route answers is declared where the route is: its schema's `response` holds its success
 * and the errors of its own (`...errorResponses(404, 409)`); a route of the document that
 * declares no success stops start-up. The statuses the pipeline can answer on every route of a
 * kind (`pipelineStatuses`, from the route's method and its declared `auth`, `scope` and
 * `database`) are this one rule's, added here so the OpenAPI document lists every status a
 * client can meet (docs/decisions.md, "Route policy is declared with the route"); a status the
 * route documents itself keeps its own description. The rule leaves alone routes with an error
 * handler of their own (the OAuth endpoints answer in RFC 6749's format), routes hidden from the
 * document, and the reference page's assets.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any app, whatever its server, logger and type provider: this reads only route options
export function documentPipelineErrors(app: FastifyInstance<any, any, any, any, any>): void {
  app.addHook('onRoute', (route) => {
    if (route.schema?.hide || route.url === '/docs' || route.url.startsWith('/docs/')) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const declared = route.schema?.response as Record<string, unknown> | undefined;
    if (!declared || !Object.keys(declared).some((status) => /^[23]/.test(status))) {
      throw new Error(`${methods.join(',')} ${route.url} declares no response: its schema needs \`response: { 200: <what it answers>, ...errorResponses(<its own error statuses>) }\``);
    }
    if (route.errorHandler) return;
    const response = { ...declared };
    for (const [status, description] of pipelineStatuses(methods, route.config)) {
      if (!(String(status) in response)) response[status] = envelopeRef(description);
    }
    // A GET answering JSON (its 200 a schema, not media types of its own) answers 304 to a
    // matching If-None-Match (src/http/conditional-get.ts).
    const ok = response[200] as Record<string, unknown> | undefined;
    const conditional = methods.includes('GET') && ok !== undefined && !('content' in ok) && route.url !== '/v1/openapi.json';
    let headers = route.schema?.headers as TSchema | undefined;
    if (conditional) {
      response[304] = { description: NOT_MODIFIED, type: 'null' };
      const ifNoneMatch = Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: IF_NONE_MATCH }));
      headers = headers ? { ...headers, properties: { ...(headers.properties as object), 'if-none-match': ifNoneMatch } } : Type.Object({ 'if-none-match': ifNoneMatch });
    }
    route.schema = { ...(route.schema ?? {}), response, ...(headers ? { headers } : {}) };
  });
}

const errorTable = Object.entries(ErrorCodes)
  .map(([name, c]) => `| ${c.code} | ${c.status} | ${name} | ${c.message} |`)
  .join('\n');

/** What every operation shares about API token scopes and the general rate limit (docs/spec-gaps.md, "Token scopes"). */
const ACCESS_NOTES = [
  `**Token scopes.** A workspace API token made with \`scopes\` may call only the operations whose \`x-required-scope\` it holds (${TOKEN_SCOPES.map((x) => `\`${x}\``).join(', ')}); a \`:write\` scope implies the \`:read\` of its area, \`secrets:access\` is never implied; otherwise 403 with code 7025 and \`metadata.required_scope\`. An operation a token can reach without a scope says so with \`x-required-scope: null\` and \`x-token-scope-why\`: \`tokens: "refused"\` (it needs a user's role or a user, so no token may call it) or \`tokens: "open"\` (any token of the workspace may, and \`why\` says why that is harmless). A token made without \`scopes\` holds them all; sessions and JWTs act by their user's role.`,
  '**Rate limit.** When the server sets `WSP_RATE_LIMIT_PER_MINUTE`, requests are counted per credential and per workspace across every server instance, and every answer carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` (seconds); past the limit, 429 (7007) with `Retry-After`.',
].join('\n\n');

/** The groups operations are tagged with, in the order the reference page shows them. */
const TAGS = [
  ['system', 'Liveness, readiness, metrics for Prometheus, and this document'],
  ['identity', 'Who the credential belongs to: the signed-in user or the API token, with the workspace it acts in'],
  ['sessions', 'Signing in with a password or single sign-on, sessions and their cookies, invitations and the first-run setup'],
  ['workspaces', 'Workspaces, their members and roles, and their quotas'],
  ['tokens', 'Workspace API tokens (`sk_svc_...`), with optional scopes'],
  ['oauth', 'OAuth 2.0 for clients without a browser: the device authorization grant (RFC 8628) and token exchange'],
  ['operations', 'Long-running work (renders, machine changes): poll an operation until it is done'],
  ['notifications', 'The inbox: notifications, marking them read, and a live stream of new ones (server-sent events)'],
  ['secrets', 'Encrypted secrets with versions; reading a value is an access, recorded in the audit log'],
  ['compute', 'Compute configurations, the catalog of server types and regions, machines and their suspensions'],
  ['packages', 'Packages of Mustache templates, their versions and previews'],
  ['installs', 'Installs of a package version rendered into a git repository: renders, history, restore, clone over HTTP'],
  ['snippets', 'Reusable queries that dashboard widgets show'],
  ['dashboards', 'Dashboards of widgets and filters, with every revision kept, diffs and restore'],
  ['platform_metrics', "Metrics the platform computes from the workspace's own activity, for dashboard widgets"],
  ['audit', 'The audit log: every write and every secret access, who made it and when'],
  ['webhooks', 'Webhook endpoints, signed deliveries (Standard Webhooks) and their retries'],
] as const;

/**
 * The server clients are told to use: the public URL when the operator set one; while it is
 * the default `localhost`, `/`, the server the document was fetched from (a localhost URL is
 * right only for a client on the same machine).
 */
const serverUrl = (publicUrl: string) => (/^https?:\/\/localhost(:\d+)?$/.test(publicUrl) ? '/' : publicUrl);

export function openApiOptions(publicUrl: string): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Workspace Platform API',
        version: packageVersion(),
        // Apache-2.0 (package.json, LICENSE); the server serves the LICENSE file it ships with
        // where this link points. OpenAPI 3.1 takes an SPDX `identifier` or a `url`, not both.
        license: { name: 'Apache-2.0', url: `${publicUrl}/license` },
        description: `Workspaces, dashboards, secrets, installs, compute and notifications.\n\nEvery error uses the envelope \`{success: false, errors: [{code, message, path?, metadata?}], result: {}}\`.\n\n${ACCESS_NOTES}\n\n| code | status | name | meaning |\n|---|---|---|---|\n${errorTable}`,
      },
      servers: [{ url: serverUrl(publicUrl), description: 'This Workspace Platform server' }],
      tags: TAGS.map(([name, description]) => ({ name, description })),
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'A session token (32 characters), a workspace API token (sk_svc_...), or an OAuth2 JWT',
          },
          basic: {
            type: 'http',
            scheme: 'basic',
            description: "Only on the git routes (clone and fetch): any user name, the credential as the password; a session's or JWT's user name is the workspace (ws_...) it acts in",
          },
          cookie: {
            type: 'apiKey',
            in: 'cookie',
            name: 'wsp_session',
            description:
              'A browser session (POST /v1/sessions with "cookie": true), used where no Authorization header is sent; its writes also send X-CSRF-Token (GET /v1/me) and, when the browser sends Origin, come from this server',
          },
        },
      },
      security: [{ bearer: [] }, { cookie: [] }],
    },
    // A route that takes no body validates one against a schema of its own (`closeUndeclaredParts`):
    // the document shows no requestBody for it, which is what "no body" means in OpenAPI.
    transform: ({ schema, url }) => {
      if (!schema || !isNoBodySchema((schema as { body?: unknown }).body)) return { schema, url };
      const { body: _noBody, ...rest } = schema as Record<string, unknown>;
      return { schema: rest, url };
    },
    transformObject: (documents) => finishDocument(structuredClone((documents as { openapiObject: Record<string, unknown> }).openapiObject)),
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
    hideUntagged: false,
  };
}
