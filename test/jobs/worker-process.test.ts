import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openTestDatabase, type TestDatabase } from '../helpers/harness.js';
import { wspEnv } from '../helpers/processes.js';
import { captureLines } from '../helpers/log-scan.js';
import { waitFor } from '../helpers/wait.js';
import { REPO_ROOT } from '../../scripts/repo-root.js';
import { systemClock } from '../../src/shared/clock.js';
import { JobQueue } from '../../src/jobs/queue.js';
import { JOB_KINDS } from '../../src/job-kinds.js';
import { PURGE_DEVICE_LOGINS } from '../../src/oauth/job-kinds.js';
import { startOperation } from '../../src/operations/service.js';
import { createAdminService } from '../../src/admin/service.js';

/**
 * `wsp worker` runs jobs without building, or even loading, the web server: the compiled
 * command (dist/, file by file, so every module it loads is resolved on its own) runs a job
 * queued by someone else and the periodic housekeeping, while a resolve hook
 * (test/helpers/record-imports.mjs) writes down every module the process loads. Fastify, its
 * plugins, its router and ajv are not among them; the database drivers and the job machinery are.
 */
let tdb: TestDatabase;
let dir: string;

before(async () => {
  tdb = await openTestDatabase();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-worker-imports-'));
});
after(async () => {
  await tdb?.cleanup();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test('wsp worker runs a queued job and the periodic work, and loads no module of the web server', async () => {
  const { db } = tdb.database;
  const { workspace_id } = await createAdminService(db, systemClock).createWorkspace('worker');
  const queue = new JobQueue(systemClock, JOB_KINDS);
  const operationId = await db.transaction().execute(async (trx) => {
    const op = await startOperation(trx, systemClock, workspace_id, 'test.worker');
    await queue.enqueue(trx, { kind: PURGE_DEVICE_LOGINS, payload: null, operationId: op });
    return op;
  });

  const root = path.dirname(fs.realpathSync(path.join(REPO_ROOT, 'package.json')));
  const recorded = path.join(dir, 'imports.txt');
  const child = spawn(process.execPath, ['--import', path.join(root, 'test/helpers/record-imports.mjs'), path.join(root, 'dist/cli/main.js'), 'worker'], {
    env: wspEnv({ ...tdb.env, WSP_LOG_LEVEL: 'info', WSP_MASTER_KEY: Buffer.alloc(32, 7).toString('base64'), WSP_RECORD_IMPORTS: recorded }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  captureLines('wsp worker (recording imports)', output);
  for (const stream of [child.stdout, child.stderr]) stream.on('data', (d: Buffer) => output.push(...d.toString().split('\n').filter(Boolean)));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  try {
    await waitFor('the worker to start', async () => output.some((l) => l.includes('"worker started"')), { timeoutMs: 60_000, detail: async () => output.join('\n') });
    await waitFor(
      'the queued job and the hourly housekeeping to run',
      async () => {
        const op = await db.selectFrom('operations').select(['done', 'result']).where('id', '=', operationId).executeTakeFirst();
        const purge = await db.selectFrom('jobs').select('state').where('kind', '=', 'maintenance.purge').executeTakeFirst();
        return op?.done === 1 && purge?.state === 'succeeded';
      },
      { timeoutMs: 60_000, detail: async () => output.join('\n') },
    );
  } finally {
    child.kill('SIGTERM');
  }
  assert.equal(await exited, 0, output.join('\n'));

  const op = (await db.selectFrom('operations').selectAll().where('id', '=', operationId).executeTakeFirst())!;
  assert.deepEqual(JSON.parse(op.result!), { device_logins: 0, guess_windows: 0 });
  const modules = fs.readFileSync(recorded, 'utf8').split('\n').filter(Boolean);
  const web = modules.filter((url) => /\/node_modules\/(fastify|@fastify\/|find-my-way|ajv|light-my-request)/.test(url));
  assert.deepEqual(web, [], 'no module of the web server is loaded');
  // The recording works: the worker's own modules and its database driver are in it.
  assert.ok(
    modules.some((url) => url.endsWith('/dist/worker.js')),
    'src/worker.ts, compiled, is loaded',
  );
  assert.ok(
    modules.some((url) => /\/node_modules\/(better-sqlite3|pg)\//.test(url)),
    'a database driver is loaded',
  );
  assert.ok(!modules.some((url) => url.endsWith('/dist/app.js') || url.endsWith('/dist/server.js')), 'neither the app nor the server is loaded');
});
