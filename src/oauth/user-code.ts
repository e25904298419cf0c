import { randomInt } from 'node:crypto';

/**
 * RFC 8628 §6.1: base-20 consonants (no vowels, so no words; no look-alike letters), 8 of
 * them: 20^8 ≈ 2^34.5 codes. With guesses rate limited, that is far more than an attacker
 * can try during a code's 15 minutes.
 */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const LENGTH = 8;

/** A fresh code, normalized (8 letters, no dash). */
export function newUserCode(): string {
  let out = '';
  for (let i = 0; i < LENGTH; i++) out += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return out;
}

/** As shown to people: `XXXX-XXXX`. */
export function displayUserCode(normalized: string): string {
  return `${normalized.slice(0, 4)}-${normalized.slice(4)}`;
}

/**
 * What a person typed, as stored: upper case, without the dash or spaces (RFC 8628 §6.1:
 * case-insensitive, punctuation ignored). Null when it cannot be a code at all.
 */
export function normalizeUserCode(typed: string): string | null {
  const letters = typed.replace(/[\s-]/g, '').toUpperCase();
  return /^[A-Z]{8}$/.test(letters) ? letters : null;
}
