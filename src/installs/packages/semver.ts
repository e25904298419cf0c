import { SEMVER_PATTERN } from './schemas.js';

const SEMVER_RE = new RegExp(SEMVER_PATTERN);

interface Parsed {
  core: [bigint, bigint, bigint];
  prerelease: string[];
}

function parse(v: string): Parsed {
  const m = SEMVER_RE.exec(v);
  if (!m) throw new Error(`not a semantic version: ${v}`);
  return { core: [BigInt(m[1]!), BigInt(m[2]!), BigInt(m[3]!)], prerelease: m[4] ? m[4].split('.') : [] };
}

export const isPrerelease = (v: string): boolean => parse(v).prerelease.length > 0;

/** SemVer 2.0.0 precedence (§11): negative, zero or positive. Build metadata is ignored. */
export function compareSemver(a: string, b: string): number {
  const pa = parse(a);
  const pb = parse(b);
  for (let i = 0; i < 3; i++) {
    if (pa.core[i]! !== pb.core[i]!) return pa.core[i]! < pb.core[i]! ? -1 : 1;
  }
  // A version with a pre-release is lower than the same version without one.
  if (pa.prerelease.length === 0 || pb.prerelease.length === 0) return Math.sign(pb.prerelease.length - pa.prerelease.length);
  for (let i = 0; i < Math.max(pa.prerelease.length, pb.prerelease.length); i++) {
    const x = pa.prerelease[i];
    const y = pb.prerelease[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (x === y) continue;
    const xn = /^\d+$/.test(x);
    const yn = /^\d+$/.test(y);
    if (xn && yn) return BigInt(x) < BigInt(y) ? -1 : 1;
    if (xn !== yn) return xn ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return 0;
}
