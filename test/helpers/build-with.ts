import { randomBytes } from 'node:crypto';
import { buildApp } from '../../src/app.js';
import { V1_AREAS } from '../../src/areas.js';
import { loadConfig } from '../../src/config.js';
import { openTestDatabase } from './harness.js';
import { registerSecret } from './log-scan.js';

export type Mount = (typeof V1_AREAS)[number];

/**
 * Builds the whole app with one more area (`extra`) mounted under /v1, as the real ones are: what
 * start-up does with a route declared so (the route policy checks, issues 48.11 and 49).
 */
export async function buildWith(extra: Mount) {
  const testDb = await openTestDatabase();
  const masterKey = randomBytes(32).toString('base64');
  registerSecret(masterKey);
  const areas = V1_AREAS as Mount[];
  areas.push(extra);
  try {
    const app = await buildApp({ config: { ...loadConfig({}), dataDir: testDb.dataDir, publicUrl: 'http://localhost:8080', masterKey }, database: testDb.database });
    return { app, db: testDb.database.db, close: async () => (await app.close(), await testDb.cleanup()) };
  } catch (err) {
    await testDb.cleanup();
    throw err;
  } finally {
    areas.pop();
  }
}
