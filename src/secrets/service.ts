import type { ServiceDeps } from '../service-deps.js';
import type { SecretVersionsTable } from './tables.js';
import { isUniqueViolation } from '../db/database.js';
import type { WorkspaceContext } from '../auth/principal.js';
import { canonicalId, newId } from '../shared/ids.js';
import { nowSeconds } from '../shared/clock.js';
import { ApiError, notFound } from '../shared/errors.js';
import { assertIfMatch, etagMismatch, newEtag, parseIfMatch } from '../shared/etag.js';
import { pageById, pageBySeq } from '../shared/cursor.js';
import { secretStore, type SecretRow, type VersionWithKey } from './store.js';
import { SecretEnvelope } from './envelope.js';
import { keyringFromConfig } from './master-key.js';
import { nextState, type VersionAction } from './transitions.js';
import { LATEST_VERSION, type AddVersionBody, type CreateSecretBody, type Secret, type SecretVersion } from './schemas.js';
import { toVersion } from './representation.js';
import { writeTransaction } from '../db/write-transaction.js';

export type SecretServiceDeps = Pick<ServiceDeps, 'db' | 'engine' | 'clock' | 'cursors' | 'config' | 'log' | 'events'>;

/**
 * Secrets and their versions (docs/spec-gaps.md, "Secrets"). Builds its envelope from the config, so building
 * the service loads (or on first start creates) the master key; call `verifyMasterKey` before
 * serving.
 */
export function createSecretService(deps: SecretServiceDeps) {
  const { db, engine, clock, cursors, config, log, events } = deps;
  const envelope = new SecretEnvelope(db, keyringFromConfig(config), log);

  async function requireSecret(ctx: WorkspaceContext, rawId: string): Promise<SecretRow> {
    const row = await secretStore.getSecret(db, ctx.workspaceId, canonicalId('sec', rawId));
    if (!row) throw notFound('secret', ['path', 'id']);
    return row;
  }

  /** After the delete has committed: a failure here must not turn a done delete into an error. */
  async function flushDeletedPages(): Promise<void> {
    try {
      await secretStore.flushDeletedPages(db, engine);
    } catch (err) {
      log.warn({ err }, 'could not checkpoint the WAL after deleting secret data; it is flushed at the next checkpoint');
    }
  }

  /** The plaintext of a version read with its secret's wrapped data key (the caller zeroes it). */
  const openVersion = (row: VersionWithKey): Buffer => envelope.openPayload({ id: row.secret_id, key_id: row.key_id, wrapped_key: row.wrapped_key }, row.id, row.ciphertext);

  /**
   * The canonical version id a read names: `latest` is the newest enabled version (404 saying
   * so when there is none), anything else the id itself.
   */
  async function resolveVersionId(ctx: WorkspaceContext, secretId: string, rawVersionId: string): Promise<string> {
    if (rawVersionId !== LATEST_VERSION) return canonicalId('secv', rawVersionId);
    const id = await secretStore.newestEnabledId(db, ctx.workspaceId, secretId);
    if (id) return id;
    await requireSecret(ctx, secretId);
    throw new ApiError('NOT_FOUND', { message: 'The secret has no enabled version: `latest` names the newest enabled one', path: ['path', 'vid'] });
  }

  /** 404 on the right path parameter: the secret itself, or only the version. */
  async function versionNotFound(ctx: WorkspaceContext, secretId: string): Promise<never> {
    await requireSecret(ctx, secretId);
    throw notFound('secret version', ['path', 'vid']);
  }

  return {
    /** For the start of the server: refuses a master key this database was not set up with. */
    verifyMasterKey: () => envelope.verifyAtStart(),

    async create(ctx: WorkspaceContext, body: CreateSecretBody): Promise<Secret> {
      const id = newId('sec');
      const now = nowSeconds(clock);
      const secret: Secret = { id, workspace_id: ctx.workspaceId, name: body.name, etag: newEtag(), created_at: now, updated_at: now };
      try {
        const key = await envelope.newWrappedDataKey(id);
        await writeTransaction(db, ctx, async (trx) => {
          await secretStore.insertSecret(trx, { ...secret, version_seq: 0, ...key });
          await events.record(trx, ctx, 'secret.created', id, { name: body.name });
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw new ApiError('SECRET_NAME_TAKEN', { path: ['body', 'name'] });
        throw err;
      }
      return secret;
    },

    async list(ctx: WorkspaceContext, limit: number, cursor: string | undefined, name?: string) {
      return pageById(
        cursors,
        // A cursor belongs to its filter: one made without it is refused with it, and the reverse.
        name === undefined ? `secrets:${ctx.workspaceId}` : `secrets:${ctx.workspaceId}:name:${name}`,
        { limit, cursor },
        (after, take) => secretStore.pageSecrets(db, ctx.workspaceId, take, after, name),
        (r): Secret => r,
      );
    },

    get: requireSecret,

    /** Deletes the secret and every version; the etag is compared inside the DELETE itself. */
    async delete(ctx: WorkspaceContext, rawId: string, ifMatch: string): Promise<void> {
      const current = await requireSecret(ctx, rawId);
      const deleted = await writeTransaction(db, ctx, async (trx) => {
        if (!(await secretStore.deleteSecret(trx, ctx.workspaceId, current.id, parseIfMatch(ifMatch)))) return false;
        await events.record(trx, ctx, 'secret.deleted', current.id, { name: current.name });
        return true;
      });
      if (!deleted) {
        const latest = await requireSecret(ctx, rawId);
        throw etagMismatch(latest.etag);
      }
      await flushDeletedPages();
    },

    async addVersion(ctx: WorkspaceContext, rawSecretId: string, body: AddVersionBody): Promise<SecretVersion> {
      // Strict base64 of 1 to 65,536 bytes: the schema's `x-base64-bytes`, checked before 403.
      const plaintext = Buffer.from(body.data, 'base64');
      const secretId = canonicalId('sec', rawSecretId);
      const now = nowSeconds(clock);
      try {
        const row = await writeTransaction(db, ctx, async (trx) => {
          const secret = await secretStore.claimVersionNumber(trx, newEtag(), now, ctx.workspaceId, secretId);
          if (!secret) throw notFound('secret', ['path', 'id']);
          const id = newId('secv');
          const version: SecretVersionsTable = {
            id,
            workspace_id: ctx.workspaceId,
            secret_id: secret.id,
            version_number: secret.version_seq,
            state: 'enabled',
            comment: body.comment ?? null,
            etag: newEtag(),
            ciphertext: envelope.sealPayload(secret, id, plaintext),
            created_at: now,
            destroyed_at: null,
          };
          await secretStore.insertVersion(trx, version);
          await events.record(trx, ctx, 'secret_version.created', id, { secret_id: secret.id, version_number: version.version_number });
          return version;
        });
        return toVersion(row);
      } finally {
        plaintext.fill(0);
      }
    },

    async listVersions(ctx: WorkspaceContext, rawSecretId: string, limit: number, cursor: string | undefined) {
      const secret = await requireSecret(ctx, rawSecretId);
      return pageBySeq(
        cursors,
        `secret_versions:${ctx.workspaceId}:${secret.id}`,
        { limit, cursor },
        (after, take) => secretStore.pageVersions(db, ctx.workspaceId, secret.id, take, after),
        (r) => r.version_number,
        toVersion,
      );
    },

    async getVersion(ctx: WorkspaceContext, rawSecretId: string, rawVersionId: string): Promise<SecretVersion> {
      const secretId = canonicalId('sec', rawSecretId);
      const row = await secretStore.getVersion(db, ctx.workspaceId, secretId, await resolveVersionId(ctx, secretId, rawVersionId));
      return row ? toVersion(row) : versionNotFound(ctx, secretId);
    },

    /** The payload of an enabled version, base64; any other state is 409 (7201). */
    async access(ctx: WorkspaceContext, rawSecretId: string, rawVersionId: string): Promise<{ id: string; data: string }> {
      const secretId = canonicalId('sec', rawSecretId);
      const row = await secretStore.versionWithKey(db, ctx.workspaceId, secretId, await resolveVersionId(ctx, secretId, rawVersionId));
      if (!row) return versionNotFound(ctx, secretId);
      if (row.state !== 'enabled') throw new ApiError('SECRET_VERSION_NOT_ENABLED', { metadata: { state: row.state } });
      const payload = openVersion(row);
      try {
        // Recorded before the payload leaves: no access is answered without its event.
        await events.record(db, ctx, 'secret_version.accessed', row.id, { secret_id: secretId, named: rawVersionId === LATEST_VERSION ? 'latest' : 'id' });
      } catch (err) {
        payload.fill(0);
        throw err;
      }
      try {
        return { id: row.id, data: payload.toString('base64') };
      } finally {
        payload.fill(0);
      }
    },

    /**
     * `:enable`, `:disable`, `:destroy`: the etag check, the state rule and the write happen in
     * one transaction on the locked row, so of concurrent writers with one etag exactly one
     * changes the version. The etag is checked first: a stale one is 409 even for a no-op.
     */
    async transition(ctx: WorkspaceContext, rawSecretId: string, rawVersionId: string, action: VersionAction, ifMatch: string): Promise<SecretVersion> {
      const secretId = canonicalId('sec', rawSecretId);
      const versionId = canonicalId('secv', rawVersionId);
      const now = nowSeconds(clock);
      const outcome = await writeTransaction(db, ctx, async (trx) => {
        const row = await secretStore.lockVersion(trx, engine, ctx.workspaceId, secretId, versionId);
        if (!row) return null;
        assertIfMatch(ifMatch, row.etag);
        const next = nextState(row.state, action);
        if (next === row.state) return { row, changed: false };
        const patch = { state: next, etag: newEtag(), ...(next === 'destroyed' ? { ciphertext: null, destroyed_at: now } : {}) };
        // The row is locked (PostgreSQL) or the database is (SQLite): this cannot miss; the etag
        // condition is there so that a mistake here could never overwrite someone else's write.
        if (!(await secretStore.updateVersion(trx, row.id, row.etag, patch))) throw etagMismatch(row.etag);
        await events.record(trx, ctx, `secret_version.${next}`, row.id, { secret_id: secretId, version_number: row.version_number, previous_state: row.state });
        return { row: { ...row, ...patch }, changed: true };
      });
      if (!outcome) return versionNotFound(ctx, secretId);
      if (outcome.changed && outcome.row.state === 'destroyed') await flushDeletedPages();
      return toVersion(outcome.row);
    },

    /** For compute (docs/spec-gaps.md, "Compute"): whether `secretId` (canonical or bare) names a secret of the workspace. */
    async exists(workspaceId: string, secretId: string): Promise<boolean> {
      return (await secretStore.getSecret(db, workspaceId, canonicalId('sec', secretId))) !== undefined;
    },

    /**
     * For compute: the decrypted payload of the secret's newest enabled version; null when the
     * secret does not exist in the workspace or has no enabled version. The caller owns the
     * buffer (zero it when done).
     */
    async newestEnabledPayload(workspaceId: string, secretId: string): Promise<Buffer | null> {
      const row = await secretStore.newestEnabledWithKey(db, workspaceId, canonicalId('sec', secretId));
      return row ? openVersion(row) : null;
    },
  };
}

export type SecretService = ReturnType<typeof createSecretService>;
