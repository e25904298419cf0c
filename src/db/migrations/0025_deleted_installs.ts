import type { Kysely } from 'kysely';
import { randomBytes } from 'node:crypto';

/**
 * Issue 50 (docs/spec-gaps.md, "Deleting an install and a package"): installs and packages can be deleted. Both are deleted softly
 * (docs/decisions.md, "Deleting installs and packages"): an install's renders stay readable
 * for the audit period and reference the package's versions, and renders cascade from their
 * install, so no row of either goes. `deleted_at` marks the row; `deleted_name` keeps the name
 * it had, while `name` is moved aside (src/installs/store.ts, `asideName`) so that a new one may
 * take it: the UNIQUE(workspace_id, name) of 0005 then stands as it is, with no table rebuild
 * (which on SQLite, foreign keys on, would cascade-delete the renders).
 *
 * Packages gain an etag: DELETE /v1/packages/{id} takes If-Match.
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['installs', 'packages']) {
    await db.schema.alterTable(table).addColumn('deleted_at', 'bigint').execute();
    await db.schema.alterTable(table).addColumn('deleted_name', 'text').execute();
  }
  await db.schema
    .alterTable('packages')
    .addColumn('etag', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  // Each existing package its own etag, as src/shared/etag.ts makes them (base64url of 12 bytes).
  const rows = await db.selectFrom('packages').select('id').execute();
  for (const { id } of rows as { id: string }[]) {
    await db
      .updateTable('packages')
      .set({ etag: randomBytes(12).toString('base64url') })
      .where('id', '=', id)
      .execute();
  }
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
