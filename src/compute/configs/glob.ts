import { GLOB_PATTERN } from './schemas.js';
/** The schema's bound on a filter, kept here too so nothing else can hand the matcher more. */
export const GLOB_MAX_LENGTH = 100;

type Token = { kind: 'star' } | { kind: 'any' } | { kind: 'char'; ch: string } | { kind: 'class'; negated: boolean; ranges: [string, string][] };

export interface Glob {
  /** Whether the whole of `name` matches. */
  test(name: string): boolean;
}

const SHAPE = new RegExp(GLOB_PATTERN);

/** The glob compiled, or null when it is not a valid glob (bad shape, too long, or a reversed range such as `[z-a]`). */
export function compileGlob(glob: string): Glob | null {
  if (glob.length === 0 || glob.length > GLOB_MAX_LENGTH || !SHAPE.test(glob)) return null;
  const tokens: Token[] = [];
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    if (ch === '*') {
      // `**` means the same as `*`: one token, so a run of stars costs nothing extra.
      if (tokens.at(-1)?.kind !== 'star') tokens.push({ kind: 'star' });
    } else if (ch === '?') tokens.push({ kind: 'any' });
    else if (ch === '[') {
      const end = glob.indexOf(']', i + 1);
      let body = glob.slice(i + 1, end);
      const negated = body.startsWith('!');
      if (negated) body = body.slice(1);
      const ranges: [string, string][] = [];
      for (let j = 0; j < body.length; j++) {
        if (body[j + 1] === '-' && j + 2 < body.length) {
          if (body[j]! > body[j + 2]!) return null;
          ranges.push([body[j]!, body[j + 2]!]);
          j += 2;
        } else ranges.push([body[j]!, body[j]!]);
      }
      tokens.push({ kind: 'class', negated, ranges });
      i = end;
    } else tokens.push({ kind: 'char', ch });
  }
  return { test: (name) => matches(tokens, name) };
}

function matchesOne(t: Token, ch: string): boolean {
  switch (t.kind) {
    case 'any':
      return true;
    case 'char':
      return t.ch === ch;
    case 'class':
      return t.ranges.some(([lo, hi]) => ch >= lo && ch <= hi) !== t.negated;
    default:
      return false;
  }
}

function matches(tokens: Token[], name: string): boolean {
  let p = 0;
  let s = 0;
  /** The last `*` passed, and where in the name it currently ends. */
  let star = -1;
  let starEnd = 0;
  while (s < name.length) {
    const t = tokens[p];
    if (t !== undefined && t.kind === 'star') {
      star = p++;
      starEnd = s;
    } else if (t !== undefined && matchesOne(t, name[s]!)) {
      p++;
      s++;
    } else if (star >= 0) {
      // Let the last star take one more character and try the rest again from there.
      p = star + 1;
      s = ++starEnd;
    } else return false;
  }
  while (tokens[p]?.kind === 'star') p++;
  return p === tokens.length;
}
