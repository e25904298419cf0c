import type { Answer } from '@workspace-platform/sdk';
import { send, workspaceClient } from './api.js';
import { confirm } from './confirm.js';
import { idArg, noMoreArgs, type Command } from './command.js';
import { printJson } from './output.js';

/** The resources deleted under their etag: GET reads it, DELETE sends it as If-Match. */
type EtagPath = '/v1/dashboards/{id}' | '/v1/secrets/{id}' | '/v1/webhooks/{id}' | '/v1/compute/configs/{id}' | '/v1/snippets/{id}' | '/v1/packages/{id}' | '/v1/clusters/{id}';

type Call = (path: EtagPath, init: { params: { path: { id: string }; header?: { 'if-match': string } } }) => Promise<Answer<{ id: string; etag: string }>>;

/**
 * `<group> delete ID`: asked first (or --yes), then the resource read for its etag and deleted
 * under it, so that a change someone made meanwhile is not deleted unseen (409).
 */
export function deleteCommand(spec: { name: string; summary: string; noun: string; prefix: string; path: EtagPath; consequence?: string }): Command {
  return {
    name: spec.name,
    usage: `${spec.prefix}_ID`,
    summary: spec.summary,
    async run(ctx) {
      const id = idArg(ctx, 0, `the ${spec.noun} id`, spec.prefix);
      noMoreArgs(ctx, 1);
      const { c, api } = workspaceClient(ctx);
      await confirm(ctx, `Delete ${spec.noun} ${id}`, spec.consequence);
      // eslint-disable-next-line no-restricted-syntax -- openapi-fetch types GET and DELETE per path literal; the path here comes from the table of deletable kinds at run time
      const current = await send(c.server, (api.GET as unknown as Call)(spec.path, { params: { path: { id } } }));
      // eslint-disable-next-line no-restricted-syntax -- openapi-fetch types GET and DELETE per path literal; the path here comes from the table of deletable kinds at run time
      await send(c.server, (api.DELETE as unknown as Call)(spec.path, { params: { path: { id }, header: { 'if-match': current.etag } } }));
      if (ctx.json) return printJson(ctx.io, { id: current.id, deleted: true });
      ctx.io.out.write(`Deleted ${current.id}.\n`);
    },
  };
}
