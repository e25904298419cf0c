import type { RendersTable } from '../installs/tables.js';

// Violation: a table another area's table file declares already.
declare module '../db/tables.js' {
  interface DB {
    dashboards: { id: string; name: string };
    renders: RendersTable;
  }
}

export {};
