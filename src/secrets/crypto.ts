import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/** AES-256: master keys and data keys are both 32 bytes. */
export const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** First byte of every sealed blob, so the format can change without guessing. */
const FORMAT_V1 = 0x01;

/** A sealed blob that does not open: wrong key, tampered bytes, or other associated data. */
export class SealError extends Error {}

export function newDataKey(): Buffer {
  return randomBytes(KEY_BYTES);
}

/**
 * A key's public name: 8 bytes of HMAC(key, constant), in hex. It identifies which master key
 * wrapped a data key (a key check value) without saying anything usable about the key.
 */
export function keyIdOf(key: Buffer): string {
  return createHmac('sha256', key).update('wsp master key id v1').digest().subarray(0, 8).toString('hex');
}

/**
 * AES-256-GCM with a random IV; `aad` binds the blob to the row it belongs to, so a blob
 * copied into another row fails to open. Output: base64 of version | iv | ciphertext | tag.
 */
export function seal(key: Buffer, plaintext: Buffer, aad: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([Buffer.of(FORMAT_V1), iv, body, cipher.getAuthTag()]).toString('base64');
}

export function open(key: Buffer, sealed: string, aad: string): Buffer {
  const raw = Buffer.from(sealed, 'base64');
  if (raw.length < 1 + IV_BYTES + TAG_BYTES || raw[0] !== FORMAT_V1) throw new SealError('not a sealed blob of a known format');
  const iv = raw.subarray(1, 1 + IV_BYTES);
  const tag = raw.subarray(raw.length - TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(raw.subarray(1 + IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]);
  } catch {
    throw new SealError('authentication failed');
  }
}

/** Associated data of a wrapped data key: the secret it belongs to. */
export const dataKeyAad = (secretId: string) => `wsp data key\u0000${secretId}`;
/** Associated data of a payload: the version it belongs to. */
export const payloadAad = (versionId: string) => `wsp payload\u0000${versionId}`;
