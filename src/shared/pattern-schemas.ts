/**
 * What a message says of a value that does not match a schema's `pattern`, in words: the
 * regular expression itself is never shown (a 422: src/http/validation.ts; a setting:
 * src/config.ts). Phrased to follow "<field> must be".
 */
export const PATTERN_WORDS = 'x-pattern-words';

/**
 * A `pattern` with the words messages use for it and an example that matches it (the OpenAPI
 * document shows it; a regular expression cannot be sampled reliably): spread into a string
 * schema's options. An example that does not match is a mistake caught when the module loads.
 */
export function patterned(pattern: string, words: string, example: string) {
  if (!new RegExp(pattern, 'u').test(example)) throw new Error(`patterned: the example "${example}" does not match ${pattern}`);
  return { pattern, [PATTERN_WORDS]: words, examples: [example] };
}
