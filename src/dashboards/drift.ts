import type { SnippetsTable } from './tables.js';
import { canonicalId } from '../shared/ids.js';
import type { SnippetEtagDrift } from './schemas/revision.js';
import type { SnippetWidget, Widget } from './schemas/widgets.js';

export type SnippetNow = Pick<SnippetsTable, 'id' | 'etag' | 'state'>;

export const isSnippetWidget = (w: Widget): w is SnippetWidget => w.widget_type === 'snippet';

/** The snippet a widget names, as stored ids are: canonical (`snp_...`). */
export const snippetKey = (w: SnippetWidget) => canonicalId('snp', w.snippet_id);

/**
 * One item per snippet widget whose snippet now has another etag or is not active, and what a
 * restore would do about it: nothing (active), reactivate it (archived), or refuse (missing).
 */
export function snippetEtagDrift(widgets: readonly Widget[], snippets: ReadonlyMap<string, SnippetNow>): SnippetEtagDrift[] {
  return widgets.filter(isSnippetWidget).flatMap((w): SnippetEtagDrift[] => {
    const now = snippets.get(snippetKey(w));
    const base = { widget_id: w.widget_id, snippet_id: w.snippet_id, snapshot_etag: w.snippet_etag };
    if (!now) return [{ ...base, current_etag: null, current_state: 'missing', restore_action: 'blocked' }];
    if (now.state === 'archived') return [{ ...base, current_etag: now.etag, current_state: 'archived', restore_action: 'reactivate' }];
    if (now.etag !== w.snippet_etag) return [{ ...base, current_etag: now.etag, current_state: 'active', restore_action: 'none' }];
    return [];
  });
}
