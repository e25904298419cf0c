import { ApiError, ErrorCodes, type ErrorEntry } from '../../shared/errors.js';
import { normalizeFilePath } from './file-paths.js';
import { MAX_ENTRIES } from '../../http/validation.js';
import { parseTemplate, TemplateSyntaxError } from './templates.js';

/**
 * A version's `files` as stored: normalized paths in byte order, each template parsed once
 * here so a render never meets a syntax error. Every bad entry is reported, each at
 * ["body", "files", <path as sent>].
 */
export function checkVersionFiles(files: Record<string, string>): Record<string, string> {
  const entries: ErrorEntry[] = [];
  // A message names the path as sent, shortened: `path` carries it whole, and a thousand bad
  // 1 KiB paths must not make a 2 MiB answer.
  const quote = (key: string) => JSON.stringify(key.length > QUOTED_PATH_MAX ? `${key.slice(0, QUOTED_PATH_MAX)}…` : key);
  const bad = (key: string, name: 'FILE_PATH_INVALID' | 'TEMPLATE_INVALID', message: string) =>
    entries.length < MAX_ENTRIES && entries.push({ code: ErrorCodes[name].code, message, path: ['body', 'files', key] });

  const byPath = new Map<string, { key: string; source: string }>();
  for (const [key, source] of Object.entries(files)) {
    const checked = normalizeFilePath(key);
    if (!checked.ok) {
      bad(key, 'FILE_PATH_INVALID', `${quote(key)}: ${checked.reason}`);
      continue;
    }
    const same = byPath.get(checked.path);
    if (same) {
      bad(key, 'FILE_PATH_INVALID', `${quote(key)} is the same file as ${quote(same.key)} (both are ${quote(checked.path)})`);
      continue;
    }
    try {
      parseTemplate(source);
    } catch (err) {
      if (!(err instanceof TemplateSyntaxError)) throw err;
      bad(key, 'TEMPLATE_INVALID', `${quote(key)}: ${err.message}`);
    }
    byPath.set(checked.path, { key, source });
  }
  // In byte order every path that starts with a file's path comes right after it, so the files
  // a path could be inside are those on a stack of prefixes: one pass, no prefix rebuilt per path.
  const sorted = [...byPath.entries()].map(([path, { key, source }]) => ({ path, key, source, bytes: Buffer.from(path) })).sort((a, b) => Buffer.compare(a.bytes, b.bytes));
  const prefixes: typeof sorted = [];
  for (const file of sorted) {
    while (prefixes.length > 0 && !file.path.startsWith(prefixes[prefixes.length - 1]!.path)) prefixes.pop();
    for (const parent of prefixes) {
      if (file.path.charCodeAt(parent.path.length) === SLASH) bad(file.key, 'FILE_PATH_INVALID', `${quote(file.key)} is inside ${quote(parent.key)}, which is a file`);
    }
    prefixes.push(file);
  }
  if (entries.length > 0) {
    throw new ApiError(entries[0]!.code === ErrorCodes.TEMPLATE_INVALID.code ? 'TEMPLATE_INVALID' : 'FILE_PATH_INVALID', { entries });
  }
  return Object.fromEntries(sorted.map(({ path, source }) => [path, source]));
}

const SLASH = '/'.charCodeAt(0);
const QUOTED_PATH_MAX = 100;
