/** Allowed: an area's tables, added to DB by declaration merging. */
declare module '../db/tables.js' {
  interface DB {
    installs: InstallsTable;
    renders: RendersTable;
  }
}

export interface InstallsTable {
  id: string;
  workspace_id: string;
  name: string;
}

export interface RendersTable {
  id: string;
  workspace_id: string;
  install_id: string;
  created_at: number;
}
