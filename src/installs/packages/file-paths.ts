export const MAX_PATH_LENGTH = 1024;
/** Deep enough for any real tree; bounds the work a path costs at every later step. */
export const MAX_PATH_DEPTH = 64;
const MAX_SEGMENT_BYTES = 255;

/** Code points HFS+ ignores in names: `.g\u200cit` is `.git` to it, and so to `git fsck`. */
const HFS_IGNORABLE = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;
const HFS_IGNORABLE_ANY = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/;
const CONTROL = /[\u0000-\u001f\u007f]/;
/** With the `u` flag a surrogate range matches only unpaired halves. */
const LONE_SURROGATE = /[\ud800-\udfff]/u;

/**
 * True for names git itself refuses in a tree (`git fsck` reports them): `.git` in any case,
 * with the trailing dots, spaces or stream suffixes Windows ignores, its 8.3 short name, and
 * the same for `.gitmodules`, which git would read as submodule settings.
 */
function isReservedGitName(segment: string): boolean {
  const name = segment
    .replace(HFS_IGNORABLE, '')
    .toLowerCase()
    .replace(/[. ]+$/, '')
    .replace(/:.*$/, '');
  return name === '.git' || name === 'git~1' || name === '.gitmodules' || /^gitmod~\d+$/.test(name);
}

export type PathCheck = { ok: true; path: string } | { ok: false; reason: string };

/**
 * A template's path as it will appear in the rendered tree: relative, `/`-separated, with
 * empty and `.` segments removed (`a//./b` is `a/b`). Refused: absolute paths, `..`, names git
 * reserves (`.git`, `.gitmodules`), NUL and other control characters, backslashes (a Windows
 * separator that would mean another path on another checkout), and unpaired surrogates
 * (they have no UTF-8 form).
 */
export function normalizeFilePath(raw: string): PathCheck {
  if (raw.length === 0) return { ok: false, reason: 'the path is empty' };
  if (raw.length > MAX_PATH_LENGTH) return { ok: false, reason: `the path is longer than ${MAX_PATH_LENGTH} characters` };
  if (CONTROL.test(raw)) return { ok: false, reason: 'the path contains NUL or another control character' };
  if (LONE_SURROGATE.test(raw)) return { ok: false, reason: 'the path contains an unpaired surrogate' };
  if (raw.includes('\\')) return { ok: false, reason: 'the path contains a backslash; separate directories with /' };
  if (raw.startsWith('/')) return { ok: false, reason: 'the path is absolute; paths are relative to the repository root' };
  // Before splitting: a path of thousands of segments costs no allocation per segment.
  if (depthOver(raw, MAX_PATH_DEPTH)) return { ok: false, reason: `the path is more than ${MAX_PATH_DEPTH} directories deep` };
  // Checked once per path: without ignorable code points, only a segment starting with `.` or
  // `g` can be a reserved name. Segments are looked at in place, not split out: a 1,000-path
  // version has 60,000 of them, and a path usually needs no normalizing at all.
  const ignorable = HFS_IGNORABLE_ANY.test(raw);
  let named = 0;
  let normalized = true;
  for (let start = 0; start <= raw.length;) {
    let end = raw.indexOf('/', start);
    if (end === -1) end = raw.length;
    const length = end - start;
    const first = raw.charCodeAt(start);
    if (length === 0 || (length === 1 && first === DOT)) normalized = false;
    else {
      named++;
      if (length === 2 && first === DOT && raw.charCodeAt(start + 1) === DOT) return { ok: false, reason: 'the path contains ".."' };
      if (ignorable || first === DOT || first === LOWER_G || first === UPPER_G) {
        const seg = raw.slice(start, end);
        if (isReservedGitName(seg)) return { ok: false, reason: `"${seg}" is a name git reserves` };
      }
      // At most 3 UTF-8 bytes per UTF-16 code unit: only a long segment can be over.
      if (length * 3 > MAX_SEGMENT_BYTES && Buffer.byteLength(raw.slice(start, end), 'utf8') > MAX_SEGMENT_BYTES)
        return { ok: false, reason: `a path segment is longer than ${MAX_SEGMENT_BYTES} bytes` };
    }
    start = end + 1;
  }
  if (named === 0) return { ok: false, reason: 'the path names no file' };
  return {
    ok: true,
    path: normalized
      ? raw
      : raw
          .split('/')
          .filter((s) => s !== '' && s !== '.')
          .join('/'),
  };
}

/** True when `raw` has more than `max` segments other than empty and `.` ones. */
function depthOver(raw: string, max: number): boolean {
  let count = 0;
  for (let start = 0; start <= raw.length;) {
    let end = raw.indexOf('/', start);
    if (end === -1) end = raw.length;
    const length = end - start;
    if (length > 1 || (length === 1 && raw.charCodeAt(start) !== DOT)) {
      if (++count > max) return true;
    }
    start = end + 1;
  }
  return false;
}

const DOT = '.'.charCodeAt(0);
const LOWER_G = 'g'.charCodeAt(0);
const UPPER_G = 'G'.charCodeAt(0);
