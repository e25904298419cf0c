import { validationError } from '../shared/errors.js';
import { MAX_PAYLOAD_BYTES } from './schemas.js';

/** Padded standard base64 (RFC 4648 §4): groups of four, `=` only as the final padding. */
const STANDARD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The `data` of a new version as bytes. Node's decoder skips what it does not understand,
 * so the text is checked first: a malformed payload is refused, never silently altered.
 */
export function decodePayload(data: string): Buffer {
  if (!STANDARD_BASE64.test(data)) {
    throw validationError(['body', 'data'], 'data must be padded standard base64 (RFC 4648 §4: A-Z a-z 0-9 + /, length a multiple of 4)');
  }
  const bytes = Buffer.from(data, 'base64');
  if (bytes.length === 0) throw validationError(['body', 'data'], 'data must not be empty');
  if (bytes.length > MAX_PAYLOAD_BYTES) {
    bytes.fill(0);
    throw validationError(['body', 'data'], `data decodes to ${bytes.length} bytes; at most ${MAX_PAYLOAD_BYTES} are allowed`);
  }
  return bytes;
}
