import type { SnippetsTable } from '../tables.js';
import type { Snippet } from './schemas.js';

// display_type is written only from the schema's enum.
export const toSnippet = (row: SnippetsTable): Snippet => ({ ...row, display_type: row.display_type as Snippet['display_type'] });
