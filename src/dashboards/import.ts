import fs from 'node:fs';
import { Type, type Static } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import type { FastifySchemaCompiler } from 'fastify';
import type { DashboardRevisionsTable } from './tables.js';
import type { DB } from '../db/tables.js';
import { identity } from '../identity/service.js';
import { snippetsNow } from './snippets/service.js';
import { newEtag } from '../shared/etag.js';
import { UnixSeconds } from '../http/schemas.js';
import { validationEntries, validatorCompiler } from '../http/validation.js';
import { AdminError, ApiError } from '../shared/errors.js';
import { newId } from '../shared/ids.js';
import { assertUniqueKeys } from './content-rules.js';
import { isSnippetWidget, snippetKey } from './drift.js';
import { revisionRow } from './revision-writer.js';
import { dashboardStore } from './store.js';
import { contentFields, Summary, type DashboardContent } from './schemas/content.js';
import { Widget } from './schemas/widgets.js';

const content = contentFields(Widget);

/** One revision of the history to import: a dashboard's content, who made it and when. */
const ImportedRevision = Type.Object(
  {
    created_at: UnixSeconds('When the revision was made, Unix seconds; never before the previous one'),
    author_id: Type.String({ minLength: 1, maxLength: 64 }),
    summary: Type.Optional(Summary),
    ...content,
    description: Type.Optional(content.description),
  },
  { additionalProperties: false },
);

/** The file `wsp admin dashboard import FILE` reads: a workspace and a history, oldest first. */
export const DashboardImportFile = Type.Object(
  { workspace_id: Type.String({ minLength: 1, maxLength: 53 }), revisions: Type.Array(ImportedRevision, { minItems: 1 }) },
  { additionalProperties: false },
);
export type DashboardImportFile = Static<typeof DashboardImportFile>;

// The very validator request bodies get, so a file is held to the API's own rules.
// Compiled when first needed: this module is loaded by every `wsp` command, `wsp serve` included.
type FileValidator = { (value: unknown): boolean; errors?: Parameters<typeof validationEntries>[0] | null };
let fileValidator: FileValidator | undefined;
const validator = (): FileValidator =>
  // eslint-disable-next-line no-restricted-syntax -- the body validator is reused for import files; Fastify types its result, the function is Ajv's
  (fileValidator ??= (validatorCompiler as FastifySchemaCompiler<unknown>)({ schema: DashboardImportFile, httpPart: 'body', method: 'POST', url: '' }) as unknown as FileValidator);

function problems(entries: { message: string }[]): AdminError {
  return new AdminError(`the file is not a valid dashboard history:\n  ${entries.map((e) => e.message).join('\n  ')}`);
}

/**
 * Brings in a dashboard with its history: one revision per entry (`source: backfill`), each
 * the parent of the next with its structural diff, the last one current. Times and authors
 * are the file's. Snippet ids that name a snippet of the workspace are stored canonical;
 * others are kept as written, and their widgets show as `missing` drift.
 */
export async function importDashboard(db: Kysely<DB>, file: unknown): Promise<{ dashboard_id: string; current_revision_id: string; revisions: number }> {
  const validate = validator();
  if (!validate(file)) throw problems(validationEntries(validate.errors ?? [], 'file'));
  const doc = file as DashboardImportFile;
  try {
    doc.revisions.forEach((r, i) => assertUniqueKeys(r, ['file', 'revisions', String(i)]));
  } catch (e) {
    if (e instanceof ApiError) throw problems(e.entries.map((x) => ({ message: `${x.path!.slice(1).join('.')}: ${x.message}` })));
    throw e;
  }
  doc.revisions.forEach((r, i) => {
    if (i > 0 && r.created_at < doc.revisions[i - 1]!.created_at) throw new AdminError(`revisions.${i}.created_at is before the previous revision's: the file must be oldest first`);
  });
  const workspaceId = doc.workspace_id.toLowerCase();
  if (!(await identity.workspace(db, workspaceId))) throw new AdminError(`unknown workspace ${doc.workspace_id}`);

  const pins = [...new Set(doc.revisions.flatMap((r) => r.widgets.filter(isSnippetWidget).map(snippetKey)))];
  const known = new Set((await snippetsNow(db, workspaceId, pins)).map((s) => s.id));
  const canonical = (widgets: Widget[]) => widgets.map((w) => (isSnippetWidget(w) && known.has(snippetKey(w)) ? { ...w, snippet_id: snippetKey(w) } : w));

  const dashboard = { id: newId('dash'), workspace_id: workspaceId };
  const rows: DashboardRevisionsTable[] = [];
  let parent: { id: string; seq: number; content: DashboardContent } | null = null;
  for (const r of doc.revisions) {
    const next: DashboardContent = {
      name: r.name,
      description: r.description ?? null,
      purpose: r.purpose,
      filter_definitions: r.filter_definitions,
      default_filter_values: r.default_filter_values,
      widgets: canonical(r.widgets),
    };
    const row = revisionRow(dashboard, parent, next, { source: 'backfill', author_id: r.author_id, summary: r.summary ?? null, restored_from_revision_id: null, created_at: r.created_at });
    rows.push(row);
    parent = { id: row.id, seq: row.seq, content: next };
  }
  const first = rows[0]!;
  const last = rows[rows.length - 1]!;
  await db.transaction().execute(async (trx) => {
    await dashboardStore.insert(trx, { ...dashboard, current_revision_id: last.id, etag: newEtag(), created_at: first.created_at, updated_at: last.created_at }, first);
    for (const row of rows.slice(1)) await dashboardStore.insertRevision(trx, row);
  });
  return { dashboard_id: dashboard.id, current_revision_id: last.id, revisions: rows.length };
}

/** `wsp admin dashboard import FILE`: the file read and parsed, then imported. */
export async function importDashboardFile(db: Kysely<DB>, path: string) {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (e) {
    throw new AdminError(`cannot read ${path}: ${(e as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new AdminError(`${path} is not JSON: ${(e as Error).message}`);
  }
  return importDashboard(db, parsed);
}
