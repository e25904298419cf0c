/**
 * What a message says of a value that does not match a schema's `pattern`, in words: the
 * regular expression itself is never shown (a 422: src/http/validation.ts; a setting:
 * src/config.ts). Phrased to follow "<field> must be".
 */
export const PATTERN_WORDS = 'x-pattern-words';

/** A `pattern` with the words messages use for it: spread into a string schema's options. */
export const patterned = (pattern: string, words: string) => ({ pattern, [PATTERN_WORDS]: words });
