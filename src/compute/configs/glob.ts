/**
 * `machine_type_filter` globs: `*` any run of characters, `?` one character, `[abc]`,
 * `[a-z]` and `[!x]` character classes; everything else literal. Matched against the
 * whole server type name, case-sensitively (provider type names are lower case).
 */
export const GLOB_PATTERN = '^(?:[A-Za-z0-9._*?-]|\\[!?[A-Za-z0-9._-]+\\])+$';

const REGEX_SPECIAL = /[.+^${}()|\\/]/g;

/** The glob as an anchored regular expression, or null when it is not a valid glob. */
export function globToRegExp(glob: string): RegExp | null {
  if (!new RegExp(GLOB_PATTERN).test(glob)) return null;
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    if (ch === '*') re += '.*';
    else if (ch === '?') re += '.';
    else if (ch === '[') {
      const end = glob.indexOf(']', i + 1);
      const body = glob.slice(i + 1, end);
      re += body.startsWith('!') ? `[^${body.slice(1)}]` : `[${body}]`;
      i = end;
    } else re += ch.replace(REGEX_SPECIAL, '\\$&');
  }
  try {
    // A reversed range such as [z-a] is the one way a well-shaped glob can still be invalid.
    return new RegExp(`^${re}$`);
  } catch {
    return null;
  }
}
