import type { Kysely } from 'kysely';
import type { ServiceDeps } from '../service-deps.js';
import type { WorkspaceContext } from '../auth/principal.js';
import type { DashboardRevisionsTable } from './tables.js';
import type { DB } from '../db/tables.js';
import { canonicalId } from '../shared/ids.js';
import { nowSeconds } from '../shared/clock.js';
import { ApiError, ErrorCodes, notFound } from '../shared/errors.js';
import { pageBySeq } from '../shared/cursor.js';
import { assertIfMatch } from '../shared/etag.js';
import { lockSnippets, reactivate, snippetsNow } from './snippets/service.js';
import { isSnippetWidget, snippetEtagDrift, snippetKey, type SnippetNow } from './drift.js';
import { defaultOverviewLayout } from './default-layout.js';
import { toContent, toDashboard, toRevision } from './representation.js';
import { appendRevision } from './revision-writer.js';
import { dashboardStore, type DashboardView } from './store.js';
import type { Dashboard } from './schemas/dashboard.js';
import type { DashboardRevision } from './schemas/revision.js';
import type { Widget } from './schemas/widgets.js';
import { writeTransaction } from '../db/write-transaction.js';

const pinnedIds = (widgets: readonly Widget[]) => [...new Set(widgets.filter(isSnippetWidget).map(snippetKey))];
const byId = (rows: SnippetNow[]) => new Map(rows.map((s) => [s.id, s]));

/** History: list and read revisions (their drift computed now), restore one, reset to the default layout. */
export function createRevisionService({ db, engine, clock, cursors, events }: Pick<ServiceDeps, 'db' | 'engine' | 'clock' | 'cursors' | 'events'>) {
  async function present(ctx: WorkspaceContext, rows: DashboardRevisionsTable[]): Promise<Map<string, DashboardRevision>> {
    const contents = rows.map((r) => ({ row: r, content: toContent(r) }));
    const snippets = byId(await snippetsNow(db, ctx.workspaceId, pinnedIds(contents.flatMap((c) => c.content.widgets))));
    return new Map(contents.map(({ row, content }) => [row.id, toRevision(row, content, snippetEtagDrift(content.widgets, snippets))]));
  }

  /**
   * Writes to the dashboard under its lock. Checks in the order of docs/spec-gaps.md, "Conventions": the dashboard
   * and whatever `find` looks up (404), then If-Match, then the rules of `change` (409).
   */
  async function write<T>(
    ctx: WorkspaceContext,
    rawId: string,
    ifMatch: string,
    find: (trx: Kysely<DB>, head: DashboardView) => Promise<T>,
    change: (trx: Kysely<DB>, head: DashboardView, found: T) => Promise<DashboardView>,
  ): Promise<Dashboard> {
    const head = await writeTransaction(db, ctx, async (trx) => {
      const head = await dashboardStore.lock(trx, ctx.workspaceId, canonicalId('dash', rawId));
      if (!head) throw notFound('dashboard');
      const found = await find(trx, head);
      assertIfMatch(ifMatch, head.etag);
      return change(trx, head, found);
    });
    return toDashboard(head);
  }

  const meta = (ctx: WorkspaceContext, source: 'restore' | 'reset', summary: string | null, restoredFrom: string | null) => ({
    source,
    author_id: ctx.actorId,
    summary,
    restored_from_revision_id: restoredFrom,
    created_at: nowSeconds(clock),
  });

  return {
    async list(ctx: WorkspaceContext, rawId: string, limit: number, cursor: string | undefined) {
      const id = canonicalId('dash', rawId);
      let shown = new Map<string, DashboardRevision>();
      const fetch = async (after: number | null, take: number) => {
        if (!(await dashboardStore.exists(db, ctx.workspaceId, id))) throw notFound('dashboard');
        const rows = await dashboardStore.revisions(db, ctx.workspaceId, id, take, after);
        shown = await present(ctx, rows.slice(0, limit));
        return rows;
      };
      return pageBySeq(
        cursors,
        `dashboard_revisions:${ctx.workspaceId}:${id}`,
        { limit, cursor },
        fetch,
        (r) => r.seq,
        (r) => shown.get(r.id)!,
      );
    },

    async get(ctx: WorkspaceContext, rawId: string, rawRevisionId: string): Promise<DashboardRevision> {
      const row = await dashboardStore.revision(db, ctx.workspaceId, canonicalId('dash', rawId), canonicalId('drev', rawRevisionId));
      if (!row) throw notFound('dashboard revision');
      return (await present(ctx, [row])).get(row.id)!;
    },

    /**
     * A new revision with the content of an earlier one (`source: restore`). Archived snippets
     * it pins are made active again; a deleted one blocks the restore (409, 7100, one entry per
     * widget). The pins are kept as they were: drift shows any etag the snippets have since.
     */
    restore: (ctx: WorkspaceContext, rawId: string, rawRevisionId: string, ifMatch: string, summary: string | null) =>
      write(
        ctx,
        rawId,
        ifMatch,
        async (trx, head) => {
          const source = await dashboardStore.revision(trx, ctx.workspaceId, head.id, canonicalId('drev', rawRevisionId));
          if (!source) throw notFound('dashboard revision');
          return source;
        },
        async (trx, head, source) => {
          const content = toContent(source);
          const snippets = byId(await lockSnippets(trx, engine, ctx.workspaceId, pinnedIds(content.widgets)));
          const blocked = content.widgets.filter(isSnippetWidget).filter((w) => !snippets.has(snippetKey(w)));
          if (blocked.length > 0) {
            throw new ApiError('DASHBOARD_SNIPPET_MISSING', {
              entries: blocked.map((w) => ({
                code: ErrorCodes.DASHBOARD_SNIPPET_MISSING.code,
                message: `Widget ${w.widget_id} uses snippet ${w.snippet_id}, which was deleted`,
                metadata: { widget_id: w.widget_id, snippet_id: w.snippet_id },
              })),
            });
          }
          await reactivate(
            trx,
            clock,
            ctx.workspaceId,
            [...snippets.values()].filter((s) => s.state === 'archived').map((s) => s.id),
          );
          const restored = await appendRevision(trx, head, content, meta(ctx, 'restore', summary, source.id));
          await events.record(trx, ctx, 'dashboard.restored', head.id, { revision_id: restored.current_revision_id, restored_from_revision_id: source.id });
          return restored;
        },
      ),

    /** A `workspace_overview` dashboard's filters, default values and widgets back to the built-in layout (`source: reset`). */
    reset: (ctx: WorkspaceContext, rawId: string, ifMatch: string, summary: string | null) =>
      write(
        ctx,
        rawId,
        ifMatch,
        async () => undefined,
        async (trx, head) => {
          if (head.purpose !== 'workspace_overview') throw new ApiError('DASHBOARD_NOT_RESETTABLE', { metadata: { purpose: head.purpose } });
          const reset = await appendRevision(trx, head, { ...toContent(head), ...defaultOverviewLayout() }, meta(ctx, 'reset', summary, null));
          await events.record(trx, ctx, 'dashboard.reset', head.id, { revision_id: reset.current_revision_id });
          return reset;
        },
      ),
  };
}

export type RevisionService = ReturnType<typeof createRevisionService>;
