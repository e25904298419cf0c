import type { Logger } from 'pino';
import { repoRoot, type Config } from './config.js';
import { sqliteFile } from './db/database.js';
import { openToOthers } from './shared/directories.js';

/** Said at every start of `wsp serve` and `wsp worker`: local data other users of the machine can read. */
export function warnAboutDataModes(config: Config, log: Pick<Logger, 'warn'>): void {
  const paths = [config.dataDir, repoRoot(config), ...(config.databaseUrl ? [] : [sqliteFile(config.dataDir)])];
  for (const { path, mode } of openToOthers(paths)) {
    log.warn({ path, mode }, `${path} can be read by other users of this machine (mode ${mode}); it holds install values and keys: chmod it to 0700 (a directory) or 0600 (a file)`);
  }
}
