import type { ServiceDeps } from '../../service-deps.js';
import type { WorkspaceContext } from '../../auth/principal.js';
import { canonicalId } from '../../shared/ids.js';
import { notFound } from '../../shared/errors.js';
import { pageBySeq } from '../../shared/cursor.js';
import { installStore } from '../store.js';
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
      return pageBySeq(
        cursors,
        `renders:${ctx.workspaceId}:${install.id}`,
        { limit, cursor },
        (after, take) => renderStore.pageForInstall(db, install.id, take, after),
        (r) => r.seq,
        toRender,
      );
    },
  };
}

export type RenderService = ReturnType<typeof createRenderService>;
