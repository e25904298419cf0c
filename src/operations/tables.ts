/**
 * The operations area's tables, as stored: operations (what a caller polls). Each joins `DB` here,
 * by declaration merging (src/db/tables.ts says why); the area's modules import their row types
 * from this file.
 */
declare module '../db/tables.js' {
  interface DB {
    operations: OperationsTable;
  }
}

export interface OperationsTable {
  id: string;
  workspace_id: string;
  kind: string;
  done: number;
  /** JSON {code, message} when the operation failed */
  error: string | null;
  /** JSON object when it succeeded */
  result: string | null;
  created_at: number;
  updated_at: number;
}
