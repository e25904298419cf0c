/**
 * The installs area's tables, as stored: packages and their versions, installs, their values and
 * renders. Each joins `DB` here, by declaration merging (src/db/tables.ts says why); the area's
 * modules import their row types from this file.
 */
declare module '../db/tables.js' {
  interface DB {
    packages: PackagesTable;
    package_versions: PackageVersionsTable;
    installs: InstallsTable;
    render_values: RenderValuesTable;
    renders: RendersTable;
    render_prefix: RenderPrefixTable;
    repository_change_requests: RepositoryChangeRequestsTable;
    repository_change_request_approvals: RepositoryChangeRequestApprovalsTable;
  }
}

export interface PackagesTable {
  id: string;
  workspace_id: string;
  /** While deleted: a name no live package can take (src/installs/store.ts, `asideName`). */
  name: string;
  etag: string;
  created_at: number;
  /** Set when the package was deleted (soft: its versions stay for the renders that used them). */
  deleted_at: number | null;
  /** The name it had, kept once `name` is moved aside. */
  deleted_name: string | null;
}

export interface PackageVersionsTable {
  id: string;
  workspace_id: string;
  package_id: string;
  semver: string;
  /** JSON object: normalized path to Mustache template */
  files: string;
  created_at: number;
}

export interface InstallsTable {
  id: string;
  workspace_id: string;
  name: string;
  package_id: string;
  desired_version_id: string;
  current_version_id: string | null;
  /** JSON object */
  values_json: string;
  automatic_updates_enabled: number;
  /** The last render number given out for this install. */
  render_seq: number;
  /** The number of the render `current_version_id` came from (0: none yet). */
  current_render_seq: number;
  /** The repository's size on disk as last measured (after a render or a repository maintenance); null: not yet. */
  repository_bytes: number | null;
  etag: string;
  created_at: number;
  updated_at: number;
  /** Set when the install was deleted: it reads 404, its renders stay readable by id. */
  deleted_at: number | null;
  /** The name it had; `name` then holds a name no live install can take (src/installs/store.ts, `asideName`). */
  deleted_name: string | null;
  /** `direct`: renders move `main`; `change_request`: each render after the first waits for a merge (docs/spec-gaps.md, "Repository change requests"). */
  delivery: Delivery;
  /** Approvals a change request needs before it can be merged (0-10). */
  required_approvals: number;
  /** The last change request number given out for this install. */
  change_request_seq: number;
  /** The cluster it is placed on (docs/spec-gaps.md, "Clusters and regions"); null: none. */
  cluster_id: string | null;
}

export type Delivery = 'direct' | 'change_request';

/**
 * `awaiting_merge`: its tree waits on a change request (refs/changes/<number>) for a merge;
 * `canceled`: that change request was closed (a reopen makes it `awaiting_merge` again).
 */
export type RenderState = 'queued' | 'running' | 'succeeded' | 'failed' | 'superseded' | 'awaiting_merge' | 'canceled';

export interface RendersTable {
  id: string;
  workspace_id: string;
  install_id: string;
  /** 1, 2, ... per install, in creation order: the order renders reach the branch. */
  seq: number;
  package_version_id: string;
  /** The values this render uses, fixed when it is created: their digest in `render_values`. */
  values_digest: string;
  state: RenderState;
  render_hash: string | null;
  tree_sha: string | null;
  commit_sha: string | null;
  operation_id: string;
  restored_from_render_id: string | null;
  message: string;
  created_at: number;
  updated_at: number;
  /** The user or API token whose request caused the render; null for the platform's automatic updates. */
  author_id: string | null;
  /** The change request carrying it (delivery `change_request`); null when it went to `main` directly. */
  change_request_id: string | null;
}

export type ChangeRequestState = 'open' | 'merged' | 'closed' | 'superseded';

export interface RepositoryChangeRequestsTable {
  id: string;
  workspace_id: string;
  install_id: string;
  /** 1, 2, 3... per install; its head is `refs/changes/<number>` in the install's repository. */
  number: number;
  title: string;
  description: string;
  state: ChangeRequestState;
  render_id: string;
  author_id: string | null;
  /** The `main` head the head commit is built on; a moved `main` re-parents the change request. */
  base_commit_sha: string;
  head_commit_sha: string;
  /** The rendered tree (the head commit's): it stays the same when re-parented. */
  tree_sha: string;
  diff_added: number;
  diff_modified: number;
  diff_removed: number;
  merged_by: string | null;
  merged_at: number | null;
  closed_at: number | null;
  /** 1 once `main` holds the merged head; 0 while open, closed, or merged with the branch move still owed. */
  landed: number;
  etag: string;
  created_at: number;
  updated_at: number;
}

export interface RepositoryChangeRequestApprovalsTable {
  change_request_id: string;
  user_id: string;
  approved_at: number;
}

/** Each distinct set of an install's values, once: renders name theirs by digest. */
/**
 * Day sums of the renders made (migration 0034): under `key` (`*`, `i:<install>`, `s:<state>`,
 * `is:<install>:<state>`, a render's state being the one it is in now), the renders made from the
 * start of the UTC day of `created_at` to the end of that second. Kept by the renders' writes.
 */
export interface RenderPrefixTable {
  workspace_id: string;
  key: string;
  created_at: number;
  p: number;
}

export interface RenderValuesTable {
  install_id: string;
  /** SHA-256 (hex) of `values_json` as stored. */
  digest: string;
  values_json: string;
}
