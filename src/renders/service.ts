import type { ServiceDeps } from '../deps.js';
import type { WorkspaceContext } from '../auth/principal.js';
import { canonicalId } from '../shared/ids.js';
import { notFound } from '../shared/errors.js';
import { toPage } from '../http/cursor.js';
import { installStore } from '../installs/store.js';
import { renderStore } from './store.js';
import { toRender } from './representation.js';

export function createRenderService({ db, cursors }: Pick<ServiceDeps, 'db' | 'cursors'>) {
  return {
    async get(ctx: WorkspaceContext, rawId: string) {
      const row = await renderStore.get(db, ctx.workspaceId, canonicalId('rnd', rawId));
      if (!row) throw notFound('render');
      return toRender(row);
    },

    async listForInstall(ctx: WorkspaceContext, rawInstallId: string, limit: number, cursor: string | undefined) {
      const install = await installStore.get(db, ctx.workspaceId, canonicalId('inst', rawInstallId));
      if (!install) throw notFound('install');
      const list = `renders:${ctx.workspaceId}:${install.id}`;
      const before = cursor ? Number(cursors.decode(list, cursor)[0]) : null;
      const rows = await renderStore.pageForInstall(db, install.id, limit + 1, before);
      return toPage(rows, limit, toRender, (r) => [r.seq], cursors, list);
    },
  };
}

export type RenderService = ReturnType<typeof createRenderService>;
