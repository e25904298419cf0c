/** The machinery's tables; the areas add theirs by declaration merging, as in src/db/tables.ts. */
export interface DB {
  jobs: { id: string; state: string };
  events: { id: string; workspace_id: string; type: string };
}
