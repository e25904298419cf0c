import type { Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import type { ServiceDeps } from '../service-deps.js';
import type { WorkspaceContext } from '../auth/principal.js';
import type { RepositoryStorage } from '../git/repository-storage.js';
import { advertiseUploadPack, startUploadPack, UploadPackRefused } from '../git/smart-http.js';
import { fetchSlots, FETCH_RETRY_AFTER_SECONDS, type FetchSlots } from '../git/fetch-slots.js';
import { canonicalId } from '../shared/ids.js';
import { ApiError, notFound } from '../shared/errors.js';
import { installStore } from './store.js';
import { renderStore } from './renders/store.js';
import type { InstallRepository, RenderFiles } from './schemas.js';

const UTF8 = new TextDecoder('utf-8', { fatal: true });
const textOf = (bytes: Buffer): string | null => {
  try {
    return UTF8.decode(bytes);
  } catch {
    return null;
  }
};

/** Repositories that live on this machine's disk, so git can serve them (GitStorage). */
export type LocalRepositories = RepositoryStorage & { pathOf(repoId: string): string };

export type RepositoryServiceDeps = Pick<ServiceDeps, 'db' | 'config'> & { repos: LocalRepositories; slots?: FetchSlots };

/** Whose share of the git processes a request uses: the credential itself, not its user. */
function credentialOf(ctx: WorkspaceContext): string {
  const p = ctx.principal;
  return p.kind === 'api_token' ? `tok:${p.tokenId}` : p.kind === 'session' ? `ses:${p.sessionId}` : `jwt:${p.subject}`;
}

/** Where the clone URL points: the smart-HTTP routes of src/installs/repository-routes.ts. */
export const repositoryPath = (installId: string) => `/v1/installs/${installId}/repository.git`;

/**
 * Read access to an install's history: its head and clone URL, and git's fetch protocol over
 * HTTP. The caller's workspace is the whole rule, as for every install route: another
 * workspace's install is 404. Nothing of git (its messages, paths on disk) reaches an answer:
 * a failure is logged with the request and answered in the envelope.
 */
export function createRepositoryService(deps: RepositoryServiceDeps) {
  const { db, config, repos } = deps;
  const slots = deps.slots ?? fetchSlots;

  /**
   * A slot for one git process, or 429 (this credential runs its share of fetches already) or
   * 503 (this server runs as many as it serves at once), both with Retry-After.
   */
  function slotFor(ctx: WorkspaceContext): () => void {
    const p = ctx.principal;
    const slot = slots.acquire({ credential: credentialOf(ctx), user: p.kind === 'api_token' ? null : p.userId, workspace: ctx.workspaceId });
    if (typeof slot === 'function') return slot;
    const headers = { 'retry-after': String(FETCH_RETRY_AFTER_SECONDS) };
    if (slot !== 'process') {
      const share = {
        credential: `This credential already runs ${slots.limits.perCredential}`,
        user: `This user already runs ${slots.limits.perUser}`,
        workspace: `This workspace already runs ${slots.limits.perWorkspace}`,
      }[slot];
      throw new ApiError('RATE_LIMITED', { message: `${share} git fetches on this server; retry after Retry-After seconds`, headers });
    }
    throw new ApiError('UNAVAILABLE', { message: `This server already runs the ${slots.limits.perProcess} git fetches it serves at once; retry after Retry-After seconds`, headers });
  }

  async function visible(ctx: WorkspaceContext, rawId: string) {
    const row = await installStore.get(db, ctx.workspaceId, canonicalId('inst', rawId));
    if (!row) throw notFound('install');
    return row;
  }

  /** The repository is the server's to keep: when git cannot read it, that is ours (503), logged. */
  function unreadable(log: FastifyBaseLogger, installId: string, err: unknown): ApiError {
    log.error({ err, installId }, 'install repository unreadable');
    return new ApiError('UNAVAILABLE', { message: "The install's repository cannot be read right now; retry later" });
  }

  async function gitDirOf(log: FastifyBaseLogger, installId: string): Promise<string> {
    if (!(await repos.exists(installId))) throw unreadable(log, installId, new Error('the repository directory is missing'));
    return repos.pathOf(installId);
  }

  return {
    async describe(ctx: WorkspaceContext, rawId: string, log: FastifyBaseLogger): Promise<InstallRepository> {
      const install = await visible(ctx, rawId);
      let head: string | null;
      try {
        head = await repos.head(install.id);
      } catch (err) {
        throw unreadable(log, install.id, err);
      }
      return { head_commit_sha: head, clone_url: `${config.publicUrl}${repositoryPath(install.id)}` };
    },

    /** The files of the commit a render made: what the repository held right after it. */
    async renderFiles(ctx: WorkspaceContext, rawRenderId: string, log: FastifyBaseLogger): Promise<RenderFiles> {
      const render = await renderStore.get(db, ctx.workspaceId, canonicalId('rnd', rawRenderId));
      if (!render) throw notFound('render');
      // The render stays readable (GET /v1/renders/{id}); its files were in the repository, which went with the install.
      if (await installStore.isDeleted(db, render.install_id)) {
        throw new ApiError('NOT_FOUND', { message: "The render's install was deleted, and its repository with it: the render's files are gone (the render itself stays readable)" });
      }
      if (!render.commit_sha) {
        throw new ApiError('RENDER_NOT_SUCCEEDED', { message: `The render has no commit to show: it is ${render.state}`, metadata: { state: render.state } });
      }
      try {
        const files = await repos.readTree(render.install_id, await repos.treeOf(render.install_id, render.commit_sha));
        return { render_id: render.id, commit_sha: render.commit_sha, files: files.map((f) => ({ path: f.path, size: f.content.length, content: textOf(f.content) })) };
      } catch (err) {
        throw unreadable(log, render.install_id, err);
      }
    },

    /** `info/refs`: the advertisement for a fetch; push is not served (403, after 404). */
    async advertise(ctx: WorkspaceContext, rawId: string, service: string, protocol: string | undefined, log: FastifyBaseLogger): Promise<Buffer> {
      const install = await visible(ctx, rawId);
      if (service !== 'git-upload-pack') {
        throw new ApiError('FORBIDDEN', {
          message: 'Install repositories are read-only over HTTP: push (git-receive-pack) is not served; commits come from renders and restores',
          path: ['query', 'service'],
        });
      }
      const gitDir = await gitDirOf(log, install.id);
      const release = slotFor(ctx);
      try {
        return await advertiseUploadPack(gitDir, protocol);
      } catch (err) {
        throw unreadable(log, install.id, err);
      } finally {
        release();
      }
    },

    /** `git-upload-pack`: one negotiation round, answered as git's output stream. */
    async uploadPack(ctx: WorkspaceContext, rawId: string, request: Buffer, protocol: string | undefined, log: FastifyBaseLogger): Promise<Readable> {
      const install = await visible(ctx, rawId);
      const gitDir = await gitDirOf(log, install.id);
      // Held for as long as git runs: until it exits, is killed with its client gone, or times out.
      const release = slotFor(ctx);
      try {
        return await startUploadPack(gitDir, request, {
          protocol,
          onExit: release,
          onLateFailure: (err) => log.warn({ err, installId: install.id }, 'git upload-pack failed after its answer began; the answer was cut short'),
        });
      } catch (err) {
        release();
        if (err instanceof UploadPackRefused) {
          log.info({ err, installId: install.id }, 'git upload-pack refused the request');
          throw new ApiError('VALIDATION_FAILED', { message: 'git could not serve this upload-pack request: it is not a valid negotiation for this repository', path: ['body'] });
        }
        throw unreadable(log, install.id, err);
      }
    },
  };
}

export type RepositoryService = ReturnType<typeof createRepositoryService>;
