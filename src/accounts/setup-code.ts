import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../db/tables.js';
import { settingsStore } from '../db/settings.js';
import { hashToken } from '../auth/credentials.js';
import { identity } from '../identity/service.js';

const KEY = 'setup_code_hash';

/**
 * The first-run setup code (docs/spec-gaps.md, "Accounts and sign-in"): while the database has no user, each start of the
 * server makes a new one, keeps its hash, and answers it for the log; null once a user exists.
 * Whoever can read the server's log may make the first owner, as whoever can run `wsp admin`.
 */
export async function issueSetupCode(db: Kysely<DB>): Promise<string | null> {
  if (await identity.anyUser(db)) return null;
  const raw = randomBytes(10).toString('base64url').toUpperCase().replace(/[^A-Z0-9]/g, 'X');
  const code = `${raw.slice(0, 4)}-${raw.slice(4, 8)}-${raw.slice(8, 12)}`;
  await settingsStore.set(db, KEY, hashToken(code));
  return code;
}

export const setupCodeHash = (db: Kysely<DB>) => settingsStore.get(db, KEY);
