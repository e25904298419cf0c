import { Type } from '@sinclair/typebox';
import type { FastifySchemaCompiler } from 'fastify';
import type { App } from '../http/fastify-types.js';
import { errorResponses, requestHeaders } from '../http/schemas.js';
import { workspaceCtx } from '../http/context.js';
import { validatorCompiler } from '../http/validation.js';
import { compiledWhenFirstUsed, type Validator } from '../http/lazy-compilation.js';
import { UPLOAD_PACK_ADVERTISEMENT, UPLOAD_PACK_REQUEST, UPLOAD_PACK_RESULT, UPLOAD_PACK_TIMEOUT_MS } from '../git/smart-http.js';
import { DEFAULT_FETCH_SLOT_LIMITS } from '../git/fetch-slots.js';
import { GitBytes, GitInfoRefsQuery, GitProtocolHeader, InstallParams, InstallRepository, RenderFiles } from './schemas.js';
import { RenderParams } from './renders/schemas.js';
import { ignoreIdempotencyKey, MAX_INFLATED_BYTES, uploadPackRequestBody } from './upload-pack-request.js';
import type { RepositoryService } from './repository-service.js';
import { EVERY_ROLE } from '../auth/roles.js';

const CREDENTIALS =
  'The credential goes as git sends it to any git host: the password of HTTP Basic, with any user name ' +
  "(`git clone https://x:sk_svc_...@host/...`, or a credential helper answering the 401's Basic challenge), or as a bearer header " +
  '(`git -c http.extraHeader="Authorization: Bearer sk_svc_..." clone <clone_url>`). A session token or JWT is a broad credential and also ' +
  'names its workspace: as the Basic user name (`ws_...`) or `-c http.extraHeader="Service-Context: ws_..."` (403 without it). ' +
  "Another workspace's install is 404; no or a revoked credential 401.";

/** The routes git calls take Basic as well as the API's bearer credentials. */
const GIT_SECURITY: { [scheme: string]: string[] }[] = [{ bearer: [] }, { basic: [] }];

/** git's bytes are checked by the route's hooks and by git, not by the JSON validator (a Buffer is not a JSON string). */
const gitBodyValidator: FastifySchemaCompiler<unknown> = (route) =>
  route.httpPart === 'body' ? () => true : (compiledWhenFirstUsed(() => validatorCompiler(route) as Validator) as ReturnType<FastifySchemaCompiler<unknown>>);

const gitHeaders = Type.Object({ ...requestHeaders().properties, 'git-protocol': GitProtocolHeader });

const LIMITS =
  `Each request runs one git process: a server runs at most ${DEFAULT_FETCH_SLOT_LIMITS.perProcess} at once, at most ${DEFAULT_FETCH_SLOT_LIMITS.perCredential} of them for one credential, ` +
  `${DEFAULT_FETCH_SLOT_LIMITS.perUser} for one user (all their sessions together) and ${DEFAULT_FETCH_SLOT_LIMITS.perWorkspace} for one workspace; ` +
  `beyond that the answer is 429 (7007, this credential, user or workspace) or 503 (7098, this server), with Retry-After. A client that disconnects stops its git process, and so does one that stops reading (WSP_IDLE_TIMEOUT_SECONDS); one fetch runs at most ${UPLOAD_PACK_TIMEOUT_MS / 60_000} minutes.`;

export function repositoryRoutes(app: App, repositories: RepositoryService): void {
  app.get(
    '/installs/:id/repository',
    {
      config: { scope: 'workspace', tokenScope: 'installs:read' },
      schema: {
        operationId: 'getInstallRepository',
        tags: ['installs'],
        summary: "The install's git repository: the head of `main` and a clone URL",
        description: `\`head_commit_sha\` is null before the first commit (a restore's commit normally shows at once, before its operation completes). \`clone_url\` serves a read-only clone over git's smart HTTP protocol (v0 and v2). ${CREDENTIALS}`,
        headers: requestHeaders(),
        params: InstallParams,
        response: { 200: InstallRepository, ...errorResponses(401, 403, 404, 422, 503) },
      },
    },
    async (request) => repositories.describe(workspaceCtx(request), request.params.id, request.log),
  );

  app.get(
    '/renders/:id/files',
    {
      config: { scope: 'workspace', tokenScope: 'installs:read', operationIdWhy: 'every file of the render in one answer, not one file' },
      schema: {
        operationId: 'getRenderFiles',
        tags: ['installs'],
        summary: 'The files of the commit a render made',
        description:
          "Every file of the render's commit (the tree of `commit_sha`), with its size and its text. A render without a commit (queued, running, failed, superseded before landing) is 409 (7305). 503 when the repository cannot be read.",
        headers: requestHeaders(),
        params: RenderParams,
        response: { 200: RenderFiles, ...errorResponses(401, 403, 404, 409, 422, 503) },
      },
    },
    async (request) => repositories.renderFiles(workspaceCtx(request), request.params.id, request.log),
  );

  // git's request body type is accepted by these two routes only: a scope of their own.
  app.register(async (scope) => {
    // eslint-disable-next-line no-restricted-syntax -- a plugin scope is typed FastifyInstance with default generics, but it is the same App (logger, TypeBox provider) that register() encapsulated
    const git = scope as unknown as App;
    git.addContentTypeParser(UPLOAD_PACK_REQUEST, { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

    git.get(
      '/installs/:id/repository.git/info/refs',
      {
        config: { scope: 'workspace', tokenScope: 'installs:read', basicAuth: true, operationIdWhy: "a step of git's smart HTTP protocol, named as git names it" },
        schema: {
          operationId: 'gitInfoRefs',
          tags: ['installs'],
          security: GIT_SECURITY,
          summary: 'git smart HTTP: the ref advertisement for a fetch or clone (made by git, not by hand)',
          description: `The first request of \`git clone <clone_url>\`. ${CREDENTIALS} \`service=git-receive-pack\` (push) is 403 (7020): install repositories only change through renders and restores. ${LIMITS}`,
          headers: gitHeaders,
          params: InstallParams,
          querystring: GitInfoRefsQuery,
          response: {
            200: { description: 'git pkt-lines', content: { [UPLOAD_PACK_ADVERTISEMENT]: { schema: GitBytes('The refs (protocol v0) or the capabilities (v2), in pkt-lines') } } },
            ...errorResponses(401, 403, 404, 422, 429, 503),
          },
        },
      },
      async (request, reply) => {
        const ctx = workspaceCtx(request);
        const protocol = request.headers['git-protocol'];
        const advertisement = await repositories.advertise(ctx, request.params.id, request.query.service, protocol, request.log);
        return reply.header('content-type', UPLOAD_PACK_ADVERTISEMENT).header('cache-control', 'no-cache').send(advertisement);
      },
    );

    git.post(
      '/installs/:id/repository.git/git-upload-pack',
      {
        config: {
          scope: 'workspace',
          // A POST that only reads (a fetch): a viewer clones too.
          roles: EVERY_ROLE,
          tokenScope: 'installs:read',
          basicAuth: true,
          event: null,
          eventWhy: "a fetch: git's POST reads the repository",
          operationIdWhy: "a step of git's smart HTTP protocol, named as git names it",
        },
        validatorCompiler: gitBodyValidator,
        preValidation: async (request) => {
          ignoreIdempotencyKey(request);
          request.body = await uploadPackRequestBody(request);
        },
        schema: {
          operationId: 'gitUploadPack',
          tags: ['installs'],
          security: GIT_SECURITY,
          summary: 'git smart HTTP: one round of fetch negotiation, answered with a pack (made by git, not by hand)',
          description: `${CREDENTIALS} The body may be gzip-encoded (\`Content-Encoding: gzip\`); as sent it is held to the 1 MiB limit (413), inflated to ${MAX_INFLATED_BYTES / 1024 / 1024} MiB. A body git refuses is 422 at \`["body"]\`. An Idempotency-Key is not used: this is a read. ${LIMITS}`,
          consumes: [UPLOAD_PACK_REQUEST],
          headers: gitHeaders,
          params: InstallParams,
          body: GitBytes('pkt-lines of wants, haves and capabilities (v0) or a command (v2)'),
          response: {
            200: { description: 'git pkt-lines and the pack, streamed', content: { [UPLOAD_PACK_RESULT]: { schema: GitBytes('Acknowledgements and the pack (side-band), in pkt-lines') } } },
            ...errorResponses(401, 403, 404, 413, 415, 422, 429, 503),
          },
        },
      },
      async (request, reply) => {
        const ctx = workspaceCtx(request);
        const protocol = request.headers['git-protocol'];
        const output = await repositories.uploadPack(ctx, request.params.id, request.body as Buffer, protocol, request.log);
        return reply.header('content-type', UPLOAD_PACK_RESULT).header('cache-control', 'no-cache').send(output);
      },
    );
  });
}
