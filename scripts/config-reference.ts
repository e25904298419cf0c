// docs/operations.md's configuration table, made from the one source of the settings: the
// `Environment` schema of src/config.ts (each variable's form, default and description). The
// README's table is checked against the same schema (test/config/environment.test.ts), and
// test/config/operations-guide.test.ts fails while the guide's table is not what this makes.
// `npm run docs:config` (scripts/gen-config-reference.ts) rewrites the table.
import path from 'node:path';
import { Environment } from '../src/config.js';
import { PATTERN_WORDS } from '../src/shared/pattern-schemas.js';
import { REPO_ROOT } from './repo-root.js';

export const GUIDE = path.join(REPO_ROOT, 'docs/operations.md');
export const BEGIN = '<!-- configuration:begin: made by `npm run docs:config` from src/config.ts; edit the schema, not this table -->';
export const END = '<!-- configuration:end -->';

interface VariableSchema {
  description?: string;
  default?: string;
  pattern?: string;
  [PATTERN_WORDS]?: string;
}

/** What a variable accepts, in words: whole numbers by their bound, else the pattern's words. */
function accepts(schema: VariableSchema): string {
  if (schema.pattern === '^0*[1-9][0-9]*$') return 'a whole number, at least 1';
  if (schema.pattern === '^[0-9]+$') return 'a whole number';
  return schema[PATTERN_WORDS] ?? 'text';
}

// A cell is one line of Markdown: a pipe would end it, and <NAME> would be read as an HTML tag.
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/</g, '&lt;');

/** The table: every variable the server reads, in the schema's order. */
export function configurationTable(): string {
  const rows = Object.entries(Environment.properties).map(([name, raw]) => {
    const schema = raw as VariableSchema;
    const byDefault = schema.default === undefined ? 'unset' : `\`${schema.default}\``;
    return `| \`${name}\` | ${cell(accepts(schema))} | ${byDefault} | ${cell(schema.description ?? '')} |`;
  });
  return ['| variable | accepts | default | what it sets |', '|---|---|---|---|', ...rows].join('\n');
}

/** The guide with its table replaced by the one the schema makes. */
export function withConfigurationTable(guide: string): string {
  const begin = guide.indexOf(BEGIN);
  const end = guide.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`${path.relative(REPO_ROOT, GUIDE)} has no ${BEGIN} ... ${END} block`);
  return `${guide.slice(0, begin + BEGIN.length)}\n${configurationTable()}\n${guide.slice(end)}`;
}
