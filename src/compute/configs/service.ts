import type { ServiceDeps } from '../../service-deps.js';
import type { ComputeConfigsTable } from '../tables.js';
import type { WorkspaceContext } from '../../auth/principal.js';
import { canonicalId, newId } from '../../shared/ids.js';
import { nowSeconds } from '../../shared/clock.js';
import { ApiError, notFound, validationError } from '../../shared/errors.js';
import { pageById } from '../../shared/cursor.js';
import { assertIfMatch, newEtag } from '../../shared/etag.js';
import type { SecretLookup } from '../provider/accounts.js';
import { duringRequest } from '../provider/errors.js';
import { configViolations, type CatalogSource } from '../catalog.js';
import { compileGlob } from './glob.js';
import { computeConfigStore } from './store.js';
import type { CreateComputeConfigBody } from './schemas.js';
import { writeTransaction } from '../../db/write-transaction.js';

export interface ComputeConfigDeps extends Pick<ServiceDeps, 'db' | 'engine' | 'clock' | 'cursors' | 'events'> {
  catalog: CatalogSource;
  secrets: SecretLookup;
}

/** Machines a 409 names at most (`metadata.machine_ids`); a longer list is cut, the message says so. */
const MAX_LISTED_MACHINES = 50;

export function createComputeConfigService({ db, engine, clock, cursors, catalog, secrets, events }: ComputeConfigDeps) {
  async function visible(ctx: WorkspaceContext, rawId: string): Promise<ComputeConfigsTable> {
    const row = await computeConfigStore.get(db, ctx.workspaceId, canonicalId('cc', rawId));
    if (!row) throw notFound('compute config');
    return row;
  }

  return {
    /**
     * Order of checks: the glob's syntax, then what the provider offers (422 entries for
     * region, image and machine_type_filter together), then the secret (404).
     */
    async create(ctx: WorkspaceContext, body: CreateComputeConfigBody): Promise<{ id: string }> {
      const filterText = body.machine_type_filter ?? '*';
      const filter = compileGlob(filterText);
      if (!filter) throw validationError(['body', 'machine_type_filter'], 'machine_type_filter is not a valid glob (a character range is reversed)');
      // What is offered is the same for every account, so the platform's account answers it.
      const violations = configViolations(await duringRequest(() => catalog.get()), { region: body.region, image: body.image, filter });
      if (violations.length > 0) throw new ApiError('VALIDATION_FAILED', { entries: violations });
      const secretId = body.secret_id === undefined ? null : canonicalId('sec', body.secret_id);
      if (secretId !== null && !(await secrets.exists(ctx.workspaceId, secretId))) throw notFound('secret', ['body', 'secret_id']);

      const now = nowSeconds(clock);
      const id = newId('cc');
      const row = {
        id,
        workspace_id: ctx.workspaceId,
        name: body.name,
        provider: body.provider,
        region: body.region,
        image: body.image,
        machine_type_filter: filterText,
        secret_id: secretId,
        etag: newEtag(),
        created_at: now,
        updated_at: now,
      };
      await writeTransaction(db, ctx, async (trx) => {
        await computeConfigStore.insert(trx, row);
        await events.record(trx, ctx, 'compute_config.created', id, { name: row.name, provider: row.provider, region: row.region, image: row.image });
      });
      return { id };
    },

    async list(ctx: WorkspaceContext, limit: number, cursor: string | undefined) {
      return pageById(
        cursors,
        `compute_configs:${ctx.workspaceId}`,
        { limit, cursor },
        (after, take) => computeConfigStore.page(db, ctx.workspaceId, take, after),
        (r) => r,
      );
    },

    get: visible,

    /** Refused (409) while machines that are not over still need the config's account. */
    async delete(ctx: WorkspaceContext, rawId: string, ifMatch: string): Promise<void> {
      const id = canonicalId('cc', rawId);
      await writeTransaction(db, ctx, async (trx) => {
        const row = await computeConfigStore.getLocked(trx, engine, ctx.workspaceId, id);
        if (!row) throw notFound('compute config');
        assertIfMatch(ifMatch, row.etag);
        const using = await computeConfigStore.machinesUsing(trx, id, MAX_LISTED_MACHINES + 1);
        if (using.length > 0) {
          const listed = using.slice(0, MAX_LISTED_MACHINES).join(', ') + (using.length > MAX_LISTED_MACHINES ? ', ...' : '');
          throw new ApiError('COMPUTE_CONFIG_IN_USE', {
            message: `Machines still use this compute config: ${listed}. Delete them (DELETE /v1/machines/{id}) first`,
            metadata: { machine_ids: using.slice(0, MAX_LISTED_MACHINES).join(',') },
          });
        }
        await computeConfigStore.delete(trx, id);
        await events.record(trx, ctx, 'compute_config.deleted', id, { name: row.name });
      });
    },
  };
}

export type ComputeConfigService = ReturnType<typeof createComputeConfigService>;
