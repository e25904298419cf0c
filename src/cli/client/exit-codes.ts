/**
 * What `wsp` exits with, so that scripts can tell failures apart. Documented in README.md and
 * in `wsp --help`; changing a number breaks scripts.
 */
export const EXIT = {
  OK: 0,
  /** The server refused the request (an error envelope), or a login or operation failed. */
  FAILED: 1,
  /** Bad command line: unknown command, missing argument, bad flag. */
  USAGE: 2,
  /** Not logged in, or the stored credential was rejected (401). */
  NOT_LOGGED_IN: 3,
  /** The server could not be reached (refused, DNS, timeout) or did not answer like this API. */
  UNREACHABLE: 4,
} as const;

/** What an API error answer said, kept for `--json` error documents. */
export interface ApiErrorDetail {
  status: number;
  errors: { code: number; message: string; path?: string[]; metadata?: Record<string, string> }[];
}

/** A failure to report on stderr and exit with; never a stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    readonly api?: ApiErrorDetail,
  ) {
    super(message);
  }
}
