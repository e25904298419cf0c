import { ApiError, ErrorCodes, type ErrorEntry } from '../../shared/errors.js';
import { normalizeFilePath } from './file-paths.js';
import { parseTemplate, TemplateSyntaxError } from './templates.js';

/**
 * A version's `files` as stored: normalized paths in byte order, each template parsed once
 * here so a render never meets a syntax error. Every bad entry is reported, each at
 * ["body", "files", <path as sent>].
 */
export function checkVersionFiles(files: Record<string, string>): Record<string, string> {
  const entries: ErrorEntry[] = [];
  const bad = (key: string, name: 'FILE_PATH_INVALID' | 'TEMPLATE_INVALID', message: string) =>
    entries.push({ code: ErrorCodes[name].code, message, path: ['body', 'files', key] });

  const byPath = new Map<string, { key: string; source: string }>();
  for (const [key, source] of Object.entries(files)) {
    const checked = normalizeFilePath(key);
    if (!checked.ok) {
      bad(key, 'FILE_PATH_INVALID', `${JSON.stringify(key)}: ${checked.reason}`);
      continue;
    }
    const same = byPath.get(checked.path);
    if (same) {
      bad(key, 'FILE_PATH_INVALID', `${JSON.stringify(key)} is the same file as ${JSON.stringify(same.key)} (${checked.path})`);
      continue;
    }
    try {
      parseTemplate(source);
    } catch (err) {
      if (!(err instanceof TemplateSyntaxError)) throw err;
      bad(key, 'TEMPLATE_INVALID', `${JSON.stringify(key)}: ${err.message}`);
    }
    byPath.set(checked.path, { key, source });
  }
  // A tree cannot hold `a` as a file and `a/b` under it as a directory. A trie of the paths,
  // built once, lets each path check its parents in time linear in its own length.
  const root: TreeNode = { children: new Map() };
  for (const [path, { key }] of byPath) {
    let node = root;
    for (const segment of path.split('/')) {
      let child = node.children.get(segment);
      if (!child) node.children.set(segment, (child = { children: new Map() }));
      node = child;
    }
    node.fileKey = key;
  }
  for (const [path, { key }] of byPath) {
    const segments = path.split('/');
    let node = root;
    for (let i = 0; i < segments.length - 1; i++) {
      node = node.children.get(segments[i]!)!;
      if (node.fileKey !== undefined) bad(key, 'FILE_PATH_INVALID', `${JSON.stringify(key)} is inside ${JSON.stringify(node.fileKey)}, which is a file`);
    }
  }
  if (entries.length > 0) {
    throw new ApiError(entries[0]!.code === ErrorCodes.TEMPLATE_INVALID.code ? 'TEMPLATE_INVALID' : 'FILE_PATH_INVALID', { entries });
  }
  const sorted = [...byPath.entries()].sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return Object.fromEntries(sorted.map(([path, { source }]) => [path, source]));
}

interface TreeNode {
  fileKey?: string;
  children: Map<string, TreeNode>;
}
