import { send } from './api.js';
import { intFlag, type CommandContext } from './command.js';
import { printJson, printTable, type Column } from './output.js';

/** The flags every list command takes. */
export const LIST_FLAGS = ['limit'] as const;
export const LIST_BOOLEANS = ['all'] as const;
export const listUsage = (max: number) => `[--limit 1-${max}] [--all]`;

export interface Listed<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

type PageAnswer<T> = Promise<{ data?: Listed<T>; error?: unknown; response: Response }>;

/**
 * A list as the command line asks for it: one page of `--limit` items (the API's default when
 * absent), or with `--all` every item, page after page at the largest size.
 */
export async function listed<T>(ctx: CommandContext, server: string, max: number, page: (query: { limit?: number; cursor?: string }) => PageAnswer<T>): Promise<Listed<T>> {
  const limit = intFlag(ctx, 'limit', 1, max);
  if (ctx.args.flags.all !== true) return send(server, page(limit ? { limit } : {}));
  const data: T[] = [];
  let cursor: string | undefined;
  do {
    const got = await send(server, page({ limit: limit ?? max, ...(cursor ? { cursor } : {}) }));
    data.push(...got.data);
    cursor = got.next_cursor ?? undefined;
  } while (cursor);
  return { data, has_more: false, next_cursor: null };
}

/** A list printed: --json as `{data, has_more, next_cursor}`, else a table and, when more exist, how to see them. */
export function printListed<T>(ctx: CommandContext, list: Listed<T>, columns: Column<T>[], empty: string): void {
  if (ctx.json) return printJson(ctx.io, list);
  printTable(ctx.io, list.data, columns, empty);
  if (list.has_more) ctx.io.err.write(`Showing the first ${list.data.length}: add --all for every one, or a larger --limit.\n`);
}
