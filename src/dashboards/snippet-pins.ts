import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { ApiError, ErrorCodes, type ErrorEntry } from '../shared/errors.js';
import { snippetsNow } from './snippets/service.js';
import { isSnippetWidget, snippetKey } from './drift.js';
import type { SnippetWidget, Widget } from './schemas/widgets.js';

export interface PinCheck {
  /** The widgets with every new pin's `snippet_id` in canonical form. */
  widgets: Widget[];
  /** The 409 to answer once the dashboard's own etag has been checked, if any. */
  conflict: ApiError | null;
}

/**
 * The snippets a write newly pins. A pin is new when the parent revision has no snippet widget
 * with this `widget_id`, `snippet_id` and `snippet_etag`; such a pin must name a snippet of the
 * workspace (404 at its `snippet_id`), active (409, 7102) and at its current etag (409, 7101,
 * `metadata.current_etag`). Pins carried over unchanged stay as they are, whatever became of
 * their snippet since: drift reports that. 404s are thrown at once (existence comes before
 * state); 409s are returned, to follow the dashboard's If-Match check.
 */
export async function checkSnippetPins(db: Kysely<DB>, workspaceId: string, widgets: Widget[], parent: readonly Widget[], at: readonly string[]): Promise<PinCheck> {
  const pinKey = (w: SnippetWidget) => `${w.widget_id}\u0000${snippetKey(w)}\u0000${w.snippet_etag}`;
  // A carried-over pin keeps the parent's spelling of its snippet id, so it shows no change.
  const pinned = new Map(parent.filter(isSnippetWidget).map((w) => [pinKey(w), w.snippet_id]));
  const out = widgets.map((w) => (isSnippetWidget(w) && pinned.has(pinKey(w)) ? { ...w, snippet_id: pinned.get(pinKey(w))! } : w));
  const fresh = widgets.flatMap((w, i) => (isSnippetWidget(w) && !pinned.has(pinKey(w)) ? [{ w, i }] : []));
  const found = new Map((await snippetsNow(db, workspaceId, [...new Set(fresh.map(({ w }) => snippetKey(w)))])).map((s) => [s.id, s]));

  const missing: ErrorEntry[] = [];
  const conflicts: ErrorEntry[] = [];
  for (const { w, i } of fresh) {
    const path = [...at, 'widgets', String(i)];
    const snippet = found.get(snippetKey(w));
    if (!snippet) {
      missing.push({ code: ErrorCodes.NOT_FOUND.code, message: 'The snippet does not exist', path: [...path, 'snippet_id'] });
      continue;
    }
    out[i] = { ...w, snippet_id: snippet.id };
    if (snippet.state === 'archived') {
      conflicts.push({ code: ErrorCodes.SNIPPET_ARCHIVED.code, message: ErrorCodes.SNIPPET_ARCHIVED.message, path: [...path, 'snippet_id'] });
    } else if (snippet.etag !== w.snippet_etag) {
      conflicts.push({ code: ErrorCodes.SNIPPET_ETAG_STALE.code, message: ErrorCodes.SNIPPET_ETAG_STALE.message, path: [...path, 'snippet_etag'], metadata: { current_etag: snippet.etag } });
    }
  }
  if (missing.length > 0) throw new ApiError('NOT_FOUND', { entries: missing });
  return { widgets: out, conflict: conflicts.length > 0 ? new ApiError('SNIPPET_ETAG_STALE', { entries: conflicts }) : null };
}
