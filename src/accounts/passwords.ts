import { randomBytes } from 'node:crypto';
import { hash, verify, type Algorithm } from '@node-rs/argon2';

/** docs/spec-gaps.md, "Accounts and sign-in". Checked by the schemas before any hashing: an over-long password costs nothing. */
export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 256;

/** argon2id with OWASP's first recommended setting (19 MiB, 2 passes, 1 lane): about 20 ms here. */
const OPTIONS = { algorithm: 2 as Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export const hashPassword = (password: string): Promise<string> => hash(password, OPTIONS);

let decoy: Promise<string> | undefined;

/**
 * True when `password` matches `stored`. Without a stored hash (no such user, or one without a
 * password) a decoy hash is verified all the same, so a wrong email takes the time a wrong
 * password does and the answer's timing tells nobody which it was.
 */
export async function passwordMatches(stored: string | null, password: string): Promise<boolean> {
  const target = stored ?? (await (decoy ??= hashPassword(randomBytes(18).toString('base64'))));
  const ok = await verify(target, password).catch(() => false);
  return stored !== null && ok;
}
