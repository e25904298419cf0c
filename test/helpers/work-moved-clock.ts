import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from '../../scripts/repo-root.js';
import { systemClock } from '../../src/shared/clock.js';
import { OffsetClock } from './offset-clock.js';
import type * as WorkerModule from '../../src/worker.js';
import type * as ConfigModule from '../../src/config.js';

/**
 * `wsp worker` as the built command runs it (dist/), but on a clock moved by the whole seconds in
 * the file named by the first argument (the whole worker: its jobs' times, leases and the events
 * it records): how a test makes a day of webhook failures pass in a real worker process. As with
 * test/helpers/serve-moved-clock.ts, production configuration has no such setting. Run with
 * `node --import tsx`.
 */
const [offsetFile] = process.argv.slice(2);
if (!offsetFile) throw new Error('usage: work-moved-clock.ts <offset file>');
const dist = (file: string) => pathToFileURL(path.join(REPO_ROOT, 'dist', file)).href;
const { work } = (await import(dist('worker.js'))) as typeof WorkerModule;
const { loadConfig } = (await import(dist('config.js'))) as typeof ConfigModule;
await work(loadConfig(), { clock: new OffsetClock(systemClock, offsetFile) });
