import { Type } from '@sinclair/typebox';
import type { App } from '../http/fastify-types.js';
import { errorResponses, NoContent, requestHeaders } from '../http/schemas.js';
import { workspaceCtx } from '../http/context.js';
import { quoteEtag } from '../http/etag.js';
import {
  AccessedVersion,
  AddVersionBody,
  CreateSecretBody,
  ListQuery,
  ReadVersionParams,
  Secret,
  SecretList,
  SecretListQuery,
  SecretParams,
  SecretVersion,
  SecretVersionList,
  VersionParams,
} from './schemas.js';
import type { SecretService } from './service.js';
import type { VersionAction } from './transitions.js';
import type { EventType } from '../events/event-type-schemas.js';
import { guarded } from '../auth/roles.js';

const WORKSPACE = { scope: 'workspace' } as const;
const TAGS = ['secrets'];
const WRITE = requestHeaders({ idempotencyKey: 'optional' });
const CONDITIONAL_WRITE = requestHeaders({ ifMatch: 'required', idempotencyKey: 'optional' });
const UNREADABLE = Type.Ref('ErrorEnvelope', {
  description: 'The stored payload failed authentication (7203: corrupt or tampered, logged) or its master key is not configured (7204); never garbage',
});

const TRANSITIONS: Record<VersionAction, { operationId: string; event: EventType; summary: string; description: string }> = {
  enable: {
    operationId: 'enableSecretVersion',
    event: 'secret_version.enabled',
    summary: 'Enable a disabled secret version (If-Match)',
    description:
      "The spec's enable. An enabled version answers unchanged (same etag); a destroyed one is 409 (7202): destroyed is final. A stale If-Match is 409 with `metadata.current_etag`, even when nothing would change.",
  },
  disable: {
    operationId: 'disableSecretVersion',
    event: 'secret_version.disabled',
    summary: 'Disable a secret version (If-Match)',
    description: 'A disabled version cannot be accessed but can be enabled again. A disabled version answers unchanged; a destroyed one is 409 (7202).',
  },
  destroy: {
    operationId: 'destroySecretVersion',
    event: 'secret_version.destroyed',
    summary: 'Destroy a secret version for good (If-Match)',
    description: 'Wipes the payload and sets `destroyed_at`; the version stays listed with state `destroyed`. Destroying a destroyed version answers it unchanged.',
  },
};

export function secretRoutes(app: App, secrets: SecretService): void {
  app.post(
    '/secrets',
    {
      config: { ...WORKSPACE, tokenScope: 'secrets:write', event: 'secret.created' },
      schema: {
        operationId: 'createSecret',
        tags: TAGS,
        summary: 'Create a secret (no versions yet)',
        description: 'The name is unique in the workspace (409, code 7200). A random data key is made for the secret and kept only wrapped by the master key.',
        headers: WRITE,
        body: CreateSecretBody,
        response: { 201: Secret, ...errorResponses(401, 403, 409, 422) },
      },
    },
    async (request, reply) => {
      const secret = await secrets.create(workspaceCtx(request), request.body);
      return reply.code(201).header('etag', quoteEtag(secret.etag)).send(secret);
    },
  );

  app.get(
    '/secrets',
    {
      config: { ...WORKSPACE, tokenScope: 'secrets:read' },
      schema: {
        operationId: 'listSecrets',
        tags: TAGS,
        summary: "List the workspace's secrets, newest first",
        description: '`?name=` finds a secret by its exact name: a page of one, or an empty one.',
        headers: requestHeaders(),
        querystring: SecretListQuery,
        response: { 200: SecretList, ...errorResponses(401, 403, 422) },
      },
    },
    async (request) => secrets.list(workspaceCtx(request), request.query.limit, request.query.cursor, request.query.name),
  );

  app.get(
    '/secrets/:id',
    {
      config: { ...WORKSPACE, tokenScope: 'secrets:read' },
      schema: { operationId: 'getSecret', tags: TAGS, summary: 'Get a secret', headers: requestHeaders(), params: SecretParams, response: { 200: Secret, ...errorResponses(401, 403, 404, 422) } },
    },
    async (request, reply) => {
      const secret = await secrets.get(workspaceCtx(request), request.params.id);
      reply.header('etag', quoteEtag(secret.etag));
      return secret;
    },
  );

  app.delete(
    '/secrets/:id',
    {
      config: { ...WORKSPACE, ...guarded('secrets.delete'), tokenScope: 'secrets:write', event: 'secret.deleted' },
      schema: {
        operationId: 'deleteSecret',
        tags: TAGS,
        summary: 'Delete a secret and all its versions (If-Match)',
        description: "If-Match is the secret's etag, which changes when a version is added: a delete based on a read that missed a new version is 409.",
        headers: CONDITIONAL_WRITE,
        params: SecretParams,
        response: { 204: NoContent, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      await secrets.delete(workspaceCtx(request), request.params.id, request.headers['if-match']);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/secrets/:id/versions',
    {
      config: { ...WORKSPACE, tokenScope: 'secrets:write', event: 'secret_version.created' },
      schema: {
        operationId: 'createSecretVersion',
        tags: TAGS,
        summary: 'Add a version (enabled) with a payload',
        description:
          '`data` is padded standard base64 of 1 to 65,536 bytes (else 422 on `["body","data"]`); `comment` at most 200 characters. Versions are numbered 1, 2, ... per secret. The payload is encrypted at rest and never appears in a response other than `:access`.',
        headers: WRITE,
        params: SecretParams,
        body: AddVersionBody,
        response: { 201: SecretVersion, ...errorResponses(401, 403, 404, 409, 422), 500: UNREADABLE },
      },
    },
    async (request, reply) => {
      const version = await secrets.addVersion(workspaceCtx(request), request.params.id, request.body);
      return reply.code(201).header('etag', quoteEtag(version.etag)).send(version);
    },
  );

  app.get(
    '/secrets/:id/versions',
    {
      config: { ...WORKSPACE, tokenScope: 'secrets:read' },
      schema: {
        operationId: 'listSecretVersions',
        tags: TAGS,
        summary: "List a secret's versions, newest first",
        description: 'Destroyed versions are listed too (with `destroyed_at`). No payloads.',
        headers: requestHeaders(),
        params: SecretParams,
        querystring: ListQuery,
        response: { 200: SecretVersionList, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request) => secrets.listVersions(workspaceCtx(request), request.params.id, request.query.limit, request.query.cursor),
  );

  app.get(
    '/secrets/:id/versions/:vid',
    {
      config: { ...WORKSPACE, tokenScope: 'secrets:read' },
      schema: {
        operationId: 'getSecretVersion',
        tags: TAGS,
        summary: 'Get a secret version (without its payload)',
        description: 'The version id `latest` names the newest enabled version; a secret with none answers 404 saying so.',
        headers: requestHeaders(),
        params: ReadVersionParams,
        response: { 200: SecretVersion, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request, reply) => {
      const version = await secrets.getVersion(workspaceCtx(request), request.params.id, request.params.vid);
      reply.header('etag', quoteEtag(version.etag));
      return version;
    },
  );

  app.get(
    '/secrets/:id/versions/:vid(^[^:]+)::access',
    {
      // Reading a payload is its own scope, never implied by secrets:read or secrets:write.
      config: { ...WORKSPACE, ...guarded('secrets.access'), tokenScope: 'secrets:access', event: 'secret_version.accessed' },
      schema: {
        operationId: 'accessSecretVersion',
        tags: TAGS,
        summary: "Access an enabled version's payload",
        description:
          "Answers `{id, data}` (base64). A disabled or destroyed version is 409 (7201) with `metadata.state`. The version id `latest` names the newest enabled version (the answer's `id` says which); a secret with none answers 404 saying so.",
        headers: requestHeaders(),
        params: ReadVersionParams,
        response: { 200: AccessedVersion, ...errorResponses(401, 403, 404, 409, 422), 500: UNREADABLE },
      },
    },
    async (request) => secrets.access(workspaceCtx(request), request.params.id, request.params.vid),
  );

  for (const action of ['enable', 'disable', 'destroy'] as const) {
    const { operationId, event, summary, description } = TRANSITIONS[action];
    app.post(
      `/secrets/:id/versions/:vid(^[^:]+)::${action}`,
      {
        // Destroying is irreversible: owners and admins only (docs/spec-gaps.md, "Roles (issue 50)"); enable and disable stay open to members.
        config: { ...WORKSPACE, ...(action === 'destroy' ? guarded('secret_versions.destroy') : {}), tokenScope: 'secrets:write', event },
        schema: {
          operationId,
          tags: TAGS,
          summary,
          description,
          headers: CONDITIONAL_WRITE,
          params: VersionParams,
          response: { 200: SecretVersion, ...errorResponses(401, 403, 404, 409, 422) },
        },
      },
      async (request, reply) => {
        const version = await secrets.transition(workspaceCtx(request), request.params.id, request.params.vid, action, request.headers['if-match']);
        reply.header('etag', quoteEtag(version.etag));
        return version;
      },
    );
  }
}
