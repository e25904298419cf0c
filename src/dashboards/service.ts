import type { ServiceDeps } from '../service-deps.js';
import type { WorkspaceContext } from '../auth/principal.js';
import { canonicalId, newId } from '../shared/ids.js';
import { nowSeconds } from '../shared/clock.js';
import { notFound } from '../shared/errors.js';
import { pageById } from '../shared/cursor.js';
import { etagMismatch, newEtag, parseIfMatch, assertIfMatch } from '../shared/etag.js';
import { checkSnippetPins } from './snippet-pins.js';
import { sameContent } from './diff.js';
import { contentColumns, toContent, toDashboard } from './representation.js';
import { appendRevision, revisionRow } from './revision-writer.js';
import { dashboardStore } from './store.js';
import type { DashboardContent } from './schemas/content.js';
import type { CreateDashboardBody, Dashboard, UpdateDashboardBody } from './schemas/dashboard.js';
import type { Widget, WidgetInput } from './schemas/widgets.js';
import { writeTransaction } from '../db/write-transaction.js';
import { assertResourceDefaults, type ResourceNames } from './resource-defaults.js';

const BODY = ['body'];

/** A widget written without `widget_id` gets a new one. */
const withWidgetIds = (widgets: WidgetInput[]): Widget[] => widgets.map((w) => (w.widget_id === undefined ? { ...w, widget_id: newId('wdg') } : (w as Widget)));

/** `names`: what cluster and region defaults may name; without it they are not checked (tests of this area alone). */
export function createDashboardService({ db, clock, cursors, events, names }: Pick<ServiceDeps, 'db' | 'clock' | 'cursors' | 'events'> & { names?: ResourceNames }) {
  return {
    /**
     * A dashboard and its first revision (`source: manual`, no parent, no diff). Bodies come
     * validated, unique widget ids and filter keys included (body-rules.ts).
     */
    async create(ctx: WorkspaceContext, body: CreateDashboardBody): Promise<Dashboard> {
      if (names) await assertResourceDefaults(names, ctx.workspaceId, body, { filter_definitions: true, default_filter_values: true });
      const pins = await checkSnippetPins(db, ctx.workspaceId, withWidgetIds(body.widgets), [], BODY);
      if (pins.conflict) throw pins.conflict;
      const content: DashboardContent = {
        name: body.name,
        description: body.description ?? null,
        purpose: body.purpose,
        filter_definitions: body.filter_definitions,
        default_filter_values: body.default_filter_values,
        widgets: pins.widgets,
      };
      const now = nowSeconds(clock);
      const dashboard = { id: newId('dash'), workspace_id: ctx.workspaceId };
      const first = revisionRow(dashboard, null, content, { source: 'manual', author_id: ctx.actorId, summary: null, restored_from_revision_id: null, created_at: now });
      const head = { ...dashboard, current_revision_id: first.id, etag: newEtag(), created_at: now, updated_at: now };
      await writeTransaction(db, ctx, async (trx) => {
        await dashboardStore.insert(trx, head, first);
        await events.record(trx, ctx, 'dashboard.created', head.id, { name: content.name, revision_id: first.id });
      });
      return toDashboard({ ...head, ...contentColumns(content), seq: first.seq });
    },

    async get(ctx: WorkspaceContext, rawId: string): Promise<Dashboard> {
      const row = await dashboardStore.get(db, ctx.workspaceId, canonicalId('dash', rawId));
      if (!row) throw notFound('dashboard');
      return toDashboard(row);
    },

    async list(ctx: WorkspaceContext, limit: number, cursor: string | undefined) {
      return pageById(cursors, `dashboards:${ctx.workspaceId}`, { limit, cursor }, (after, take) => dashboardStore.page(db, ctx.workspaceId, take, after), toDashboard);
    },

    /**
     * Each field given replaces that field; the result becomes a new revision (`source:
     * manual`) with its diff against the current one, unless it changes nothing: then no
     * revision is made and the etag stays. Check order: 404 (dashboard, then snippets newly
     * pinned), then If-Match, then the pins' state (409).
     */
    async update(ctx: WorkspaceContext, rawId: string, body: UpdateDashboardBody, ifMatch: string): Promise<Dashboard> {
      const id = canonicalId('dash', rawId);
      if (names && (body.filter_definitions !== undefined || body.default_filter_values !== undefined)) {
        // Before the transaction: a region is the provider's to say, never asked under a lock.
        const current = await dashboardStore.get(db, ctx.workspaceId, id);
        if (current) {
          const parent = toContent(current);
          const content = { filter_definitions: body.filter_definitions ?? parent.filter_definitions, default_filter_values: body.default_filter_values ?? parent.default_filter_values };
          await assertResourceDefaults(names, ctx.workspaceId, content, { filter_definitions: body.filter_definitions !== undefined, default_filter_values: body.default_filter_values !== undefined });
        }
      }
      const head = await writeTransaction(db, ctx, async (trx) => {
        const head = await dashboardStore.lock(trx, ctx.workspaceId, id);
        if (!head) throw notFound('dashboard');
        const parent = toContent(head);
        const pins = body.widgets === undefined ? null : await checkSnippetPins(trx, ctx.workspaceId, withWidgetIds(body.widgets), parent.widgets, BODY);
        assertIfMatch(ifMatch, head.etag);
        if (pins?.conflict) throw pins.conflict;
        const next: DashboardContent = {
          name: body.name ?? parent.name,
          description: body.description === undefined ? parent.description : body.description,
          purpose: body.purpose ?? parent.purpose,
          filter_definitions: body.filter_definitions ?? parent.filter_definitions,
          default_filter_values: body.default_filter_values ?? parent.default_filter_values,
          widgets: pins?.widgets ?? parent.widgets,
        };
        if (sameContent(parent, next)) return head;
        const updated = await appendRevision(trx, head, next, {
          source: 'manual',
          author_id: ctx.actorId,
          summary: body.summary ?? null,
          restored_from_revision_id: null,
          created_at: nowSeconds(clock),
        });
        await events.record(trx, ctx, 'dashboard.updated', id, { name: next.name, revision_id: updated.current_revision_id });
        return updated;
      });
      return toDashboard(head);
    },

    /** The dashboard and, with it, all its revisions (the only way a revision is ever deleted). */
    async delete(ctx: WorkspaceContext, rawId: string, ifMatch: string): Promise<void> {
      const id = canonicalId('dash', rawId);
      const deleted = await writeTransaction(db, ctx, async (trx) => {
        if (!(await dashboardStore.deleteIf(trx, ctx.workspaceId, id, parseIfMatch(ifMatch)))) return false;
        await events.record(trx, ctx, 'dashboard.deleted', id);
        return true;
      });
      if (deleted) return;
      const current = await dashboardStore.etag(db, ctx.workspaceId, id);
      if (current === undefined) throw notFound('dashboard');
      throw etagMismatch(current);
    },
  };
}

export type DashboardService = ReturnType<typeof createDashboardService>;
