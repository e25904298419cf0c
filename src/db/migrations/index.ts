import type { Migration, MigrationProvider } from 'kysely';
import * as foundation from './0001_foundation.js';
import * as jobs from './0002_jobs.js';

/** Every migration, in order. Listed statically so the built package needs no directory scan. */
const migrations: Record<string, Migration> = {
  '0001_foundation': foundation,
  '0002_jobs': jobs,
};

export const migrationProvider: MigrationProvider = {
  async getMigrations() {
    return migrations;
  },
};
