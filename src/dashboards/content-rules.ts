import { ApiError, ErrorCodes, type ErrorEntry } from '../shared/errors.js';

interface Keyed {
  filter_definitions?: readonly { key: string }[];
  widgets?: readonly { widget_id?: string | undefined }[];
}

/**
 * Widgets are matched by `widget_id` (diffs, bindings to the dashboard) and filters by `key`:
 * both must be unique in a dashboard. Each repeat is named at its own path (422).
 */
export function assertUniqueKeys(content: Keyed, at: readonly string[]): void {
  const entries: ErrorEntry[] = [];
  const repeats = (values: readonly (string | undefined)[], code: number, message: string, path: (i: number) => string[]) => {
    const seen = new Set<string>();
    values.forEach((v, i) => {
      if (v === undefined) return;
      if (seen.has(v)) entries.push({ code, message: `${message}: ${JSON.stringify(v)}`, path: path(i) });
      seen.add(v);
    });
  };
  repeats(content.filter_definitions?.map((f) => f.key) ?? [], ErrorCodes.DUPLICATE_FILTER_KEY.code, 'Another filter definition has this key', (i) => [...at, 'filter_definitions', String(i), 'key']);
  repeats(content.widgets?.map((w) => w.widget_id) ?? [], ErrorCodes.DUPLICATE_WIDGET_ID.code, 'Another widget has this widget_id', (i) => [...at, 'widgets', String(i), 'widget_id']);
  if (entries.length > 0) throw new ApiError('DUPLICATE_WIDGET_ID', { entries });
}
