import type { Kysely } from 'kysely';

/**
 * Issue 51 (docs/spec-gaps.md, "Repository change requests"): an install may ask
 * that its renders wait for review. Installs gain `delivery` and `required_approvals`, and the
 * counter that numbers their change requests 1, 2, 3...; renders gain the author that caused them
 * (the change request's `author_id`) and the change request that carries them. A change request
 * and its approvals are rows of their own; a merged one whose head the branch does not hold yet
 * (the process died between its commit and the branch move) is found by `landed = 0`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('installs')
    .addColumn('delivery', 'text', (c) => c.notNull().defaultTo('direct'))
    .execute();
  await db.schema
    .alterTable('installs')
    .addColumn('required_approvals', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('installs')
    .addColumn('change_request_seq', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('renders').addColumn('author_id', 'text').execute();
  await db.schema.alterTable('renders').addColumn('change_request_id', 'text').execute();

  await db.schema
    .createTable('repository_change_requests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('install_id', 'text', (c) => c.notNull().references('installs.id').onDelete('cascade'))
    .addColumn('number', 'integer', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('render_id', 'text', (c) => c.notNull().references('renders.id'))
    .addColumn('author_id', 'text')
    .addColumn('base_commit_sha', 'text', (c) => c.notNull())
    .addColumn('head_commit_sha', 'text', (c) => c.notNull())
    .addColumn('tree_sha', 'text', (c) => c.notNull())
    .addColumn('diff_added', 'integer', (c) => c.notNull())
    .addColumn('diff_modified', 'integer', (c) => c.notNull())
    .addColumn('diff_removed', 'integer', (c) => c.notNull())
    .addColumn('merged_by', 'text')
    .addColumn('merged_at', 'bigint')
    .addColumn('closed_at', 'bigint')
    .addColumn('landed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('etag', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('repository_change_requests_install_number', ['install_id', 'number'])
    .execute();
  await db.schema.createIndex('repository_change_requests_workspace').on('repository_change_requests').columns(['workspace_id', 'id']).execute();
  await db.schema.createIndex('repository_change_requests_install').on('repository_change_requests').columns(['install_id', 'state']).execute();

  await db.schema
    .createTable('repository_change_request_approvals')
    .addColumn('change_request_id', 'text', (c) => c.notNull().references('repository_change_requests.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('approved_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('repository_change_request_approvals_pk', ['change_request_id', 'user_id'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
