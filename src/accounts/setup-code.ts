import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { settingsStore } from '../db/settings.js';
import { hashToken } from '../auth/credentials.js';
import { identity } from '../identity/service.js';

/** One settings row per code issued: `setup_code_hash.<hash>` (the key before several codes: `setup_code_hash`). */
const KEY = 'setup_code_hash';

/**
 * The first-run setup code (docs/spec-gaps.md, "Accounts and sign-in"): while the database has no user, each start of the
 * server makes a new one, keeps its hash, and answers it for the log; null once a user exists.
 * Whoever can read the server's log may make the first owner, as whoever can run `wsp admin`.
 * Every code issued while there is no user is valid, not only the last: several servers that
 * start at once on one database (compose.yaml) each log their own, and the one the operator
 * finds in a log must work. Each is a row of its own, so that none of them overwrites another.
 */
export async function issueSetupCode(db: Kysely<DB>): Promise<string | null> {
  if (await identity.anyUser(db)) return null;
  const raw = randomBytes(10)
    .toString('base64url')
    .toUpperCase()
    .replace(/[^A-Z0-9]/g, 'X');
  const code = `${raw.slice(0, 4)}-${raw.slice(4, 8)}-${raw.slice(8, 12)}`;
  const hash = hashToken(code);
  await settingsStore.set(db, `${KEY}.${hash}`, hash);
  return code;
}

/** The hashes of the setup codes issued (empty: none yet). */
export const setupCodeHashes = (db: Kysely<DB>): Promise<string[]> => settingsStore.family(db, KEY);
