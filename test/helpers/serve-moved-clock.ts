import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from '../../scripts/repo-root.js';
import { systemClock } from '../../src/shared/clock.js';
import { OffsetClock } from './offset-clock.js';
import type * as ServerModule from '../../src/server.js';
import type * as ConfigModule from '../../src/config.js';

/**
 * `wsp serve` as the built command runs it (dist/), but with the compute area on a clock moved
 * by the whole seconds in the file named by the first argument: how tests of real processes
 * move suspensions days ahead in every process at once. Production configuration has no such
 * setting; a clock is given only by whoever starts the server. Run with `node --import tsx`.
 */
const [offsetFile, ...args] = process.argv.slice(2);
if (!offsetFile) throw new Error('usage: serve-moved-clock.ts <offset file> [--no-worker]');
const dist = (file: string) => pathToFileURL(path.join(REPO_ROOT, 'dist', file)).href;
const { serve } = (await import(dist('server.js'))) as typeof ServerModule;
const { loadConfig } = (await import(dist('config.js'))) as typeof ConfigModule;
await serve(loadConfig(), { worker: !args.includes('--no-worker'), computeClock: new OffsetClock(systemClock, offsetFile) });
