import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Permission } from '../auth/roles.js';
import type { Role } from '../auth/principal.js';
import type { Principal, RequestContext } from '../auth/principal.js';
import type { ListAlongside, ListRead } from '../auth/authenticator.js';
import type { Scope } from '../auth/workspace-context.js';
import type { NoTokenScope, TokenScope } from '../auth/scopes.js';
import type { IdempotencyClaim } from './idempotency.js';
import type { JobRunner } from '../jobs/runner.js';
import type { LazyCompilation } from './lazy-compilation.js';
import type { EventType } from '../events/event-type-schemas.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * 'none' for the unauthenticated routes (health, metrics, OpenAPI, OAuth endpoints, sign-in);
     * 'optional': a credential is checked when one is sent, else `principal` stays null.
     */
    auth?: 'none' | 'optional';
    /** false for an unauthenticated route that never reads the database (no 503 7054 documented on it). */
    database?: false;
    /** Workspace resolution of docs/spec-gaps.md, "Credentials and tokens"; absent means no context is resolved. */
    scope?: Scope;
    /**
     * The scope an API token needs (docs/spec-gaps.md, "Token scopes"), or null with `tokenScopeWhy`. Every route a
     * workspace API token can reach (any `scope` but 'user', and an `auth: 'optional'` one)
     * declares it here: start-up refuses one that does not (src/http/token-scopes.ts).
     */
    tokenScope?: TokenScope | null;
    /** Why a route with `tokenScope: null` needs none: tokens are refused anyway, or open to any token (and why that is harmless). */
    tokenScopeWhy?: NoTokenScope;
    /**
     * The event the route records when it succeeds (docs/spec-gaps.md, "Events and the audit log"), or null with `eventWhy`. Every
     * write (POST, PUT, PATCH, DELETE) declares it, and so does a read that records one (a secret's
     * `:access`): start-up refuses a write that declares neither (src/http/route-events.ts), and
     * the document shows it (`x-event-type`). A page outside the document whose one form does
     * several things (`POST /device`) names every event it may record.
     */
    event?: EventType | readonly EventType[] | null;
    /** Why a write with `event: null` records nothing (it only reads, or nobody is signed in yet). */
    eventWhy?: string;
    /**
     * Why the route's `schema.operationId` (the name generators give its method) is not the one the
     * naming rule makes from its method and path (src/http/operation-ids.ts): a probe, a protocol
     * step, a resource the path does not name.
     */
    operationIdWhy?: string;
    /**
     * Roles of the users allowed to call the route (docs/spec-gaps.md, "Roles (issue 50)"). Absent:
     * every role reads, and a workspace write needs a writer (owner, admin, member: a viewer is
     * refused, 7027). A route narrower than that names the guarded action in `permission`
     * (`...guarded('secrets.delete')`, src/auth/roles.ts); one a viewer may write declares
     * `roles: EVERY_ROLE`. Tokens are judged by `tokenScope`, never by roles.
     */
    roles?: readonly Role[];
    /** The guarded action the route's `roles` stand for, as `GET /v1/me` lists it (src/auth/roles.ts). */
    permission?: Permission;
    /** The notification endpoints' 401 body: `{_tag: "Unauthorized", ...}` with no entries. */
    taggedUnauthorized?: boolean;
    /** HTTP Basic accepted besides Bearer (the password is the credential): the routes git calls. */
    basicAuth?: boolean;
    /**
     * Well-formedness a schema cannot express because it needs the clock (a time in the future):
     * run by the pipeline after schema validation and before Service-Context and role, so its
     * 422 comes before any 403 (docs/spec-gaps.md, "Conventions"). Throws an ApiError; `now` is the injected clock's.
     */
    validate?: (request: FastifyRequest, now: number) => void;
    /**
     * A GET of a list whose rows bump a version (src/http/list-cache.ts): the list's key for
     * this request (`<table>:<owner>`), so a conditional read is answered from that version. Its
     * page carries the version it was read at (src/db/json-rows.ts), which tags the answer.
     */
    listVersion?: (request: FastifyRequest) => string;
    /**
     * The same lists as the credential's owner names them (its workspace's for an API token, its
     * user's for a session), for every request or as this request names them (undefined: none):
     * the credential's statement reads their versions too, and a request whose `listVersion` or
     * `versionedBy` are those lists makes no statement of its own for them.
     */
    listWithCredential?: ListAlongside | ((request: FastifyRequest) => ListAlongside | undefined);
    /**
     * A GET whose answer is made only from lists with versions (migrations 0018, 0020): their keys
     * for this request (undefined: none applies, the route answers as any other). The answer is
     * read after these versions and tagged by them.
     */
    versionedBy?: (request: FastifyRequest) => readonly string[] | undefined;
  }
  interface FastifyInstance {
    /** This process's job runner: started by `wsp serve` / `wsp worker`, driven by hand in tests. */
    jobs: JobRunner;
    /** Route schemas not compiled yet; `warm()` compiles them (the server does once it listens). */
    schemaCompilation: LazyCompilation;
  }
  interface FastifyRequest {
    principal: Principal | null;
    ctx: RequestContext | null;
    /** The Idempotency-Key claim this request holds (null when it replays a stored response). */
    idem: { claim: IdempotencyClaim | null; replayed: boolean; override?: { status: number; body: unknown } } | null;
    /** The ETag of a versioned answer being made (src/http/list-cache.ts): kept under it once sent. */
    versionTag: string | null;
    /** The versions of the lists `listWithCredential` names, as the credential's statement read them. */
    listRead: readonly ListRead[] | null;
  }
}

export type App = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;
