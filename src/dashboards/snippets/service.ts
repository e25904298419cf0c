import type { EventType } from '../../events/event-type-schemas.js';
import type { ServiceDeps } from '../../service-deps.js';
import type { WorkspaceContext } from '../../auth/principal.js';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/tables.js';
import type { SnippetsTable } from '../tables.js';
import type { Engine } from '../../db/database.js';
import { canonicalId, newId } from '../../shared/ids.js';
import { nowSeconds, type Clock } from '../../shared/clock.js';
import { notFound } from '../../shared/errors.js';
import { pageById } from '../../shared/cursor.js';
import { etagMismatch, newEtag, parseIfMatch, assertIfMatch } from '../../shared/etag.js';
import { snippetStore, type SnippetChanges } from './store.js';
import type { CreateSnippetBody, Snippet, UpdateSnippetBody } from './schemas.js';
import { toSnippet } from './representation.js';
import { writeTransaction } from '../../db/write-transaction.js';

/**
 * For dashboards (the snippets' public face inside their area): the state and etag now of the
 * workspace's snippets among `ids`, for pins and drift. Unknown ids are simply absent.
 */
export const snippetsNow = (db: Kysely<DB>, workspaceId: string, ids: readonly string[]) => snippetStore.byIds(db, workspaceId, ids);

/** The same, locked until the caller's transaction ends: a snippet found cannot be deleted under it. */
export const lockSnippets = (trx: Kysely<DB>, engine: Engine, workspaceId: string, ids: readonly string[]) => snippetStore.lockByIds(trx, engine, workspaceId, ids);

/**
 * Makes the archived snippets among `ids` active again, in the caller's transaction (a restored
 * revision uses them): each gets a new etag, as `:unarchive` gives it. Active ones are left alone.
 */
export async function reactivate(trx: Kysely<DB>, clock: Clock, workspaceId: string, ids: readonly string[]): Promise<void> {
  const now = nowSeconds(clock);
  for (const id of ids) await snippetStore.updateIf(trx, workspaceId, id, '*', { state: 'active', etag: newEtag(), updated_at: now }, { onlyState: 'archived' });
}

export function createSnippetService({ db, clock, cursors, events }: Pick<ServiceDeps, 'db' | 'clock' | 'cursors' | 'events'>) {
  async function visible(ctx: WorkspaceContext, rawId: string): Promise<SnippetsTable> {
    const row = await snippetStore.get(db, ctx.workspaceId, canonicalId('snp', rawId));
    if (!row) throw notFound('snippet');
    return row;
  }

  /**
   * Applies `changes` if If-Match names the current version. The etag is checked before the
   * no-op rule (a stale etag is 409 even when nothing would change), and compared again inside
   * the UPDATE, so of concurrent writers with one etag exactly one wins.
   */
  async function write(ctx: WorkspaceContext, rawId: string, ifMatch: string, type: EventType, changes: Partial<SnippetsTable>): Promise<Snippet> {
    const current = await visible(ctx, rawId);
    assertIfMatch(ifMatch, current.etag);
    if (Object.entries(changes).every(([k, v]) => current[k as keyof SnippetsTable] === v)) return toSnippet(current);
    const next: SnippetChanges = { ...changes, etag: newEtag(), updated_at: nowSeconds(clock) };
    const written = await writeTransaction(db, ctx, async (trx) => {
      if (!(await snippetStore.updateIf(trx, ctx.workspaceId, current.id, parseIfMatch(ifMatch), next))) return false;
      await events.record(trx, ctx, type, current.id, { name: next.name ?? current.name, fields: Object.keys(changes).sort() });
      return true;
    });
    if (!written) {
      const latest = await snippetStore.get(db, ctx.workspaceId, current.id);
      if (!latest) throw notFound('snippet');
      throw etagMismatch(latest.etag);
    }
    return toSnippet({ ...current, ...next });
  }

  return {
    async create(ctx: WorkspaceContext, body: CreateSnippetBody): Promise<Snippet> {
      const now = nowSeconds(clock);
      const row: SnippetsTable = {
        id: newId('snp'),
        workspace_id: ctx.workspaceId,
        name: body.name,
        source: body.source,
        display_type: body.display_type ?? null,
        state: 'active',
        etag: newEtag(),
        created_at: now,
        updated_at: now,
      };
      await writeTransaction(db, ctx, async (trx) => {
        await snippetStore.insert(trx, row);
        await events.record(trx, ctx, 'snippet.created', row.id, { name: row.name });
      });
      return toSnippet(row);
    },

    get: async (ctx: WorkspaceContext, rawId: string) => toSnippet(await visible(ctx, rawId)),

    async list(ctx: WorkspaceContext, limit: number, cursor: string | undefined) {
      return pageById(cursors, `snippets:${ctx.workspaceId}`, { limit, cursor }, (after, take) => snippetStore.page(db, ctx.workspaceId, take, after), toSnippet);
    },

    update: (ctx: WorkspaceContext, rawId: string, body: UpdateSnippetBody, ifMatch: string) =>
      write(ctx, rawId, ifMatch, 'snippet.updated', {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.source !== undefined ? { source: body.source } : {}),
        ...(body.display_type !== undefined ? { display_type: body.display_type } : {}),
      }),

    /** Archiving an archived snippet (or unarchiving an active one) succeeds without change. */
    archive: (ctx: WorkspaceContext, rawId: string, ifMatch: string) => write(ctx, rawId, ifMatch, 'snippet.archived', { state: 'archived' }),

    unarchive: (ctx: WorkspaceContext, rawId: string, ifMatch: string) => write(ctx, rawId, ifMatch, 'snippet.unarchived', { state: 'active' }),

    /** Gone for good: revisions that use it show it as `missing`, and cannot be restored. */
    async delete(ctx: WorkspaceContext, rawId: string, ifMatch: string): Promise<void> {
      const current = await visible(ctx, rawId);
      const deleted = await writeTransaction(db, ctx, async (trx) => {
        if (!(await snippetStore.deleteIf(trx, ctx.workspaceId, current.id, parseIfMatch(ifMatch)))) return false;
        await events.record(trx, ctx, 'snippet.deleted', current.id, { name: current.name });
        return true;
      });
      if (deleted) return;
      const latest = await snippetStore.get(db, ctx.workspaceId, current.id);
      if (!latest) throw notFound('snippet');
      throw etagMismatch(latest.etag);
    },
  };
}

export type SnippetService = ReturnType<typeof createSnippetService>;
