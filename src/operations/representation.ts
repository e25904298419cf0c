import type { OperationsTable } from './tables.js';

/** A stored operation as the API shows it. */
export function toOperation(row: OperationsTable) {
  return {
    id: row.id,
    kind: row.kind,
    done: row.done === 1,
    error: row.error ? (JSON.parse(row.error) as { code: number; message: string }) : null,
    result: row.result ? (JSON.parse(row.result) as Record<string, unknown>) : null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
