import type { DB } from './tables.js';

/** Stands for src/db/prepared.ts's: a machinery function that takes a table by name. */
export function preparedInsert<T extends keyof DB>(table: T, columns: readonly (keyof DB[T])[]) {
  return { table, columns };
}
