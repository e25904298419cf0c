import { pooledRandom } from './random-pool.js';

/** Prefixes of docs/spec-gaps.md, "Conventions"; a wire id is `<prefix>_<lower-case ULID>`. */
export const ID_PREFIXES = {
  workspace: 'ws',
  user: 'usr',
  session: 'ses',
  apiToken: 'tok',
  dashboard: 'dash',
  dashboardRevision: 'drev',
  widget: 'wdg',
  snippet: 'snp',
  secret: 'sec',
  secretVersion: 'secv',
  notification: 'ntf',
  computeConfig: 'cc',
  machine: 'mch',
  suspension: 'susp',
  package: 'pkg',
  packageVersion: 'pkgv',
  install: 'inst',
  render: 'rnd',
  repositoryChangeRequest: 'rcr',
  operation: 'op',
  repository: 'repo',
  cluster: 'cl',
  job: 'job',
  deviceCode: 'dev',
  invitation: 'inv',
  event: 'evt',
  webhook: 'wh',
  webhookDelivery: 'whd',
} as const;

export type IdPrefix = (typeof ID_PREFIXES)[keyof typeof ID_PREFIXES];

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';
let lastTime = -1;
let lastRandom: number[] = [];

function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0; i < 10; i++) {
    out = CROCKFORD[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

function freshRandom(): number[] {
  return pooledRandom(16, (bytes, start) => {
    const digits = new Array<number>(16);
    // 32 divides 256: each digit is uniform.
    for (let i = 0; i < 16; i++) digits[i] = bytes[start + i]! & 31;
    return digits;
  });
}

/** Monotonic within this process: ids made in the same millisecond still sort in creation order. */
export function ulid(nowMs: number = Date.now()): string {
  if (nowMs <= lastTime) {
    let i = lastRandom.length - 1;
    while (i >= 0 && lastRandom[i] === 31) lastRandom[i--] = 0;
    if (i < 0) {
      lastTime += 1;
      lastRandom = freshRandom();
    } else {
      lastRandom[i]! += 1;
    }
  } else {
    lastTime = nowMs;
    lastRandom = freshRandom();
  }
  return encodeTime(lastTime) + lastRandom.map((d) => CROCKFORD[d]).join('');
}

/** When an id was made (Unix ms): its first ten characters after the prefix. */
export function timeOfId(id: string): number {
  let ms = 0;
  for (const ch of id.slice(id.indexOf('_') + 1, id.indexOf('_') + 11)) ms = ms * 32 + CROCKFORD.indexOf(ch);
  return ms;
}

/** The smallest id of `prefix` made at `ms`: ids made then or later sort after it. */
export function idFloor(prefix: IdPrefix, ms: number): string {
  return `${prefix}_${encodeTime(Math.max(0, Math.floor(ms)))}${'0'.repeat(16)}`;
}

let atTime = -1;
let atRandom: number[] = [];

/**
 * An id whose time is exactly `ms`, however the clock moved: monotonic within one millisecond,
 * but never moved past `ms` as ulid() moves it (for a clock that stepped back). So a row whose
 * time is also stored (an event's `created_at`, from the same reading) can be found by its time
 * through an index on its id: `created_at` in [a, b) is exactly ids in [idFloor(a), idFloor(b)).
 */
export function idAt(prefix: IdPrefix, ms: number): string {
  const t = Math.max(0, Math.floor(ms));
  let i = atRandom.length - 1;
  if (t === atTime) while (i >= 0 && atRandom[i] === 31) atRandom[i--] = 0;
  // Another millisecond, or 32^16 ids in this one (never: a fresh draw still sorts in it).
  if (t !== atTime || i < 0) {
    atTime = t;
    atRandom = freshRandom();
  } else {
    atRandom[i]! += 1;
  }
  return `${prefix}_${encodeTime(t)}${atRandom.map((d) => CROCKFORD[d]).join('')}`;
}

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${ulid()}`;
}

/** The base of a canonical id (`mch_01h...` -> `01h...`); a bare id is its own base. */
export function baseOf(id: string): string {
  return id.slice(id.indexOf('_') + 1);
}

/**
 * A path id in canonical (`sec_01h...`) or bare (`01h...`) form, made canonical.
 * Length rules are the schema's; anything else that names nothing is simply not found.
 */
export function canonicalId(prefix: IdPrefix, raw: string): string {
  const lower = raw.toLowerCase();
  return lower.startsWith(`${prefix}_`) ? lower : `${prefix}_${lower}`;
}
