// Violation: a table declared outside the area's table file, where ownership is not looked for.
declare module '../db/tables.js' {
  interface DB {
    metric_points: { id: string; value: number };
  }
}

export {};
