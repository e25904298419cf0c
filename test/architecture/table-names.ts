import ts from 'typescript';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Which tables a module names in its queries, read from its syntax tree (not its text, so a
 * comment or a log message naming a table is no use of it). What counts as naming a table:
 * - the table argument of Kysely's builders: `selectFrom`, `insertInto`, `replaceInto`,
 *   `updateTable`, `deleteFrom`, `mergeInto`, `using`, and the joins (`'renders as r'`: renders;
 *   an array: each);
 * - `sql.table('x')`;
 * - the table argument of the machinery's functions that take one (`preparedInsert`, the window
 *   counters' `countAttempt`, `giveBackAttempt`, `purgeWindows`);
 * - raw SQL (a `sql` template, `sql.raw('...')`): a known table's name after `from`, `join`,
 *   `into`, `update`, `table` or `using`.
 * A builder given a table as a variable or any other computed string cannot be read, and is
 * answered in `unresolved`: the check needs a store's tables written out. A subquery or a
 * callback in that place is not a table name (what it queries is read where it is written).
 */
export interface TableUse {
  table: string;
  line: number;
  /** The builder or form that named it: `selectFrom`, `sql`, ... */
  how: string;
}

export interface TablesNamed {
  uses: TableUse[];
  /** Builders whose table argument is computed: `selectFrom(t)` at this line. */
  unresolved: { line: number; how: string; text: string }[];
}

const BUILDERS = new Set([
  'selectFrom',
  'insertInto',
  'replaceInto',
  'updateTable',
  'deleteFrom',
  'mergeInto',
  'using',
  'innerJoin',
  'leftJoin',
  'rightJoin',
  'fullJoin',
  'innerJoinLateral',
  'leftJoinLateral',
  'crossJoin',
  'crossJoinLateral',
]);

/** `renders`, `renders as r`, `public.renders`: the table's own name. */
function tableOfReference(ref: string): string {
  const name = ref.trim().split(/\s+/)[0] ?? '';
  return name.slice(name.lastIndexOf('.') + 1);
}

const RAW_TABLE = /\b(?:from|join|into|update|table|using)\s+"?([A-Za-z_][A-Za-z0-9_]*)"?/gi;

function tablesInRawSql(text: string, known: ReadonlySet<string>): string[] {
  return [...text.matchAll(RAW_TABLE)].map((m) => m[1]!.toLowerCase()).filter((t) => known.has(t));
}

/**
 * The machinery's functions that take a table by name, and which argument it is: a table named
 * to them is named by the caller (`preparedInsert('secret_versions', ...)`, a window counter's).
 */
const TABLE_ARGUMENT: Readonly<Record<string, number>> = { preparedInsert: 0, countAttempt: 1, giveBackAttempt: 1, purgeWindows: 1 };

const isStringLike = (n: ts.Node): n is ts.StringLiteral | ts.NoSubstitutionTemplateLiteral => ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n);

/** What a module that names a table must hold somewhere: the others are not parsed (most of src/ is routes, schemas, rules). */
const MAY_NAME_A_TABLE = new RegExp([...BUILDERS, 'sql', ...Object.keys(TABLE_ARGUMENT)].join('|'));

/** The tables `known` holds that `source` names in queries. */
export function tablesNamedIn(source: string, fileName: string, known: ReadonlySet<string>): TablesNamed {
  if (!MAY_NAME_A_TABLE.test(source)) return { uses: [], unresolved: [] };
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const out: TablesNamed = { uses: [], unresolved: [] };
  const lineOf = (n: ts.Node) => file.getLineAndCharacterOfPosition(n.getStart(file)).line + 1;
  const use = (table: string, n: ts.Node, how: string) => {
    if (known.has(table)) out.uses.push({ table, line: lineOf(n), how });
  };

  const visit = (n: ts.Node): void => {
    if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression)) {
      const method = n.expression.name.text;
      const receiver = n.expression.expression;
      const arg = n.arguments[0];
      if (BUILDERS.has(method) && arg) {
        if (isStringLike(arg)) use(tableOfReference(arg.text), arg, method);
        else if (ts.isArrayLiteralExpression(arg)) {
          for (const e of arg.elements) {
            if (isStringLike(e)) use(tableOfReference(e.text), e, method);
            else out.unresolved.push({ line: lineOf(e), how: method, text: e.getText(file) });
          }
        } else if (
          ts.isIdentifier(arg) ||
          ts.isPropertyAccessExpression(arg) ||
          ts.isElementAccessExpression(arg) ||
          ts.isTemplateExpression(arg) ||
          ts.isConditionalExpression(arg) ||
          ts.isBinaryExpression(arg) ||
          ts.isAsExpression(arg)
        ) {
          out.unresolved.push({ line: lineOf(arg), how: method, text: arg.getText(file) });
        }
      }
      if (ts.isIdentifier(receiver) && receiver.text === 'sql' && arg) {
        if (method === 'table') {
          if (isStringLike(arg)) use(tableOfReference(arg.text), arg, 'sql.table');
          else out.unresolved.push({ line: lineOf(arg), how: 'sql.table', text: arg.getText(file) });
        } else if (method === 'raw' && isStringLike(arg)) {
          for (const t of tablesInRawSql(arg.text, known)) use(t, arg, 'sql.raw');
        }
      }
    }
    if (ts.isCallExpression(n) && ts.isIdentifier(n.expression) && Object.hasOwn(TABLE_ARGUMENT, n.expression.text)) {
      const how = n.expression.text;
      const arg = n.arguments[TABLE_ARGUMENT[how]!];
      if (arg && isStringLike(arg)) use(tableOfReference(arg.text), arg, how);
      else if (arg) out.unresolved.push({ line: lineOf(arg), how, text: arg.getText(file) });
    }
    if (ts.isTaggedTemplateExpression(n) && ts.isIdentifier(n.tag) && n.tag.text === 'sql') {
      const t = n.template;
      // The text between substitutions; a substitution stands as a value, never a table name.
      const text = ts.isNoSubstitutionTemplateLiteral(t) ? t.text : [t.head.text, ...t.templateSpans.map((s) => s.literal.text)].join(' ? ');
      for (const table of tablesInRawSql(text, known)) use(table, n, 'sql');
    }
    ts.forEachChild(n, visit);
  };
  visit(file);
  return out;
}

/** The tables a table file adds to `DB`: the members of its `interface DB` (top-level or in `declare module`). */
export function tablesDeclaredIn(source: string, fileName: string): string[] {
  if (!/\binterface DB\b/.test(source)) return [];
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const names: string[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isInterfaceDeclaration(n) && n.name.text === 'DB') {
      for (const m of n.members) {
        if (ts.isPropertySignature(m) && (ts.isIdentifier(m.name) || ts.isStringLiteral(m.name))) names.push(m.name.text);
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(file);
  return names;
}

/** The machinery's tables that an area may name in its queries nonetheless: which areas, and why. */
export type MachineryTablesOfAreas = Readonly<Record<string, { areas: readonly string[]; why: string }>>;

export interface TableViolation {
  /** Relative to the folder checked: `src/platform-metrics/store.ts`. */
  file: string;
  line: number;
  table: string;
  how: string;
  problem: string;
}

function modulesUnder(dir: string, rel = ''): string[] {
  return fs.readdirSync(path.join(dir, rel), { withFileTypes: true }).flatMap((e) => {
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) return modulesUnder(dir, p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

/**
 * Every module under `root/src` that names a table it may not (tablesNamedIn): an area's module
 * (any file under src/<area>/, its stores first of all) names its own tables, declared in its
 * `src/<area>/tables.ts`, and the machinery's tables `allowed` gives it; the machinery (the
 * folders `machinery` lists) and the composition root (src/*.ts, src/cli) name only the
 * machinery's tables (src/db/tables.ts). A table declared by two table files, or declared
 * outside a table file, an area module naming a table by a computed string, and an allowance of
 * anything but a machinery table are violations too. Migrations are not read: they make every
 * table.
 */
export function tableViolations(root: string, machinery: readonly string[], allowed: MachineryTablesOfAreas): TableViolation[] {
  const src = path.join(root, 'src');
  const modules = modulesUnder(src);
  const part = (m: string) => (m.includes('/') ? m.slice(0, m.indexOf('/')) : '');
  const isMachinery = (p: string) => machinery.includes(p);
  const areaOf = (m: string): string | null => (isMachinery(part(m)) || part(m) === '' || part(m) === 'cli' ? null : part(m));
  const out: TableViolation[] = [];

  /** Who declares each table: one table file, or a violation naming every one. */
  const owners = new Map<string, string[]>();
  const declaredIn = new Map<string, string[]>();
  const tableFiles = modules.filter((m) => m === 'db/tables.ts' || (areaOf(m) !== null && m === `${areaOf(m)}/tables.ts`));
  for (const m of tableFiles) {
    const who = m === 'db/tables.ts' ? 'machinery' : areaOf(m)!;
    for (const t of tablesDeclaredIn(fs.readFileSync(path.join(src, m), 'utf8'), m)) {
      owners.set(t, [...(owners.get(t) ?? []), who]);
      declaredIn.set(t, [...(declaredIn.get(t) ?? []), `src/${m}`]);
    }
  }
  for (const [t, files] of declaredIn) {
    if (files.length > 1) for (const file of files) out.push({ file, line: 0, table: t, how: 'interface DB', problem: `declared by more than one table file: ${files.join(', ')}` });
  }
  const owner = (t: string) => owners.get(t)!;
  const areas = new Set(modules.map(areaOf).filter((a): a is string => a !== null));
  for (const [t, { areas: those }] of Object.entries(allowed)) {
    if (owners.get(t)?.[0] !== 'machinery') out.push({ file: 'test/architecture', line: 0, table: t, how: 'allowance', problem: 'only a machinery table may be allowed to an area' });
    for (const a of those) if (!areas.has(a)) out.push({ file: 'test/architecture', line: 0, table: t, how: 'allowance', problem: `no area ${a}` });
  }

  const known = new Set(owners.keys());
  for (const m of modules) {
    if (m.startsWith('db/migrations/') || tableFiles.includes(m)) continue;
    const area = areaOf(m);
    const source = fs.readFileSync(path.join(src, m), 'utf8');
    const file = `src/${m}`;
    for (const t of tablesDeclaredIn(source, m)) out.push({ file, line: 0, table: t, how: 'interface DB', problem: 'declared outside a table file (src/db/tables.ts, src/<area>/tables.ts)' });
    const named = tablesNamedIn(source, m, known);
    for (const u of named.uses) {
      const who = owner(u.table);
      if (who.includes(area ?? 'machinery')) continue;
      if (area !== null && who.includes('machinery') && allowed[u.table]?.areas.includes(area)) continue;
      const theirs = who.includes('machinery') ? "the machinery's table" : `the ${who.join(' and ')} area's table`;
      out.push({ ...u, file, problem: area === null ? `${theirs}, named by the machinery` : `${theirs}, named by ${area}` });
    }
    if (area !== null) {
      for (const u of named.unresolved) out.push({ file, line: u.line, table: u.text, how: u.how, problem: 'a computed table name, which the check cannot read' });
    }
  }
  return out;
}

export const describeViolation = (v: TableViolation) => `${v.file}:${v.line}: ${v.table} (${v.how}): ${v.problem}`;
