import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer, type ServerProcess } from '../helpers/processes.js';

/**
 * The data directory holds install values in clear, the cursor HMAC key and the master key file:
 * no other local user may read it. `wsp serve` makes it 0700 and its files 0600, and says at start
 * when an existing directory or database file is wider (it leaves them as the operator set them).
 */
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-modes-'));
const servers: ServerProcess[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  fs.rmSync(root, { recursive: true, force: true });
});

const modeOf = (p: string) => (fs.statSync(p).mode & 0o777).toString(8);
const warnings = (server: ServerProcess) =>
  server.output.flatMap((line) => {
    try {
      const entry = JSON.parse(line) as { level?: number; path?: string; mode?: string };
      return entry.level === 40 && entry.path ? [`${entry.path} ${entry.mode}`] : [];
    } catch {
      return [];
    }
  });

test('a new data directory is 0700 and the database, its WAL and the master key are 0600; nothing is said', async () => {
  const dir = path.join(root, 'fresh', 'data');
  const server = await startServer({ WSP_DATA_DIR: dir });
  servers.push(server);
  // A write, so that SQLite has made its WAL and shared-memory files.
  assert.equal((await fetch(`${server.url}/readyz`)).status, 200);
  assert.equal(modeOf(dir), '700');
  for (const file of ['wsp.sqlite', 'wsp.sqlite-wal', 'wsp.sqlite-shm', 'master.key']) assert.equal(modeOf(path.join(dir, file)), '600', file);
  assert.deepEqual(warnings(server), []);
});

test('an existing directory and database file open to others are named in a warning at start; the server still starts', async () => {
  const dir = path.join(root, 'wide');
  fs.mkdirSync(dir, { mode: 0o755 });
  fs.chmodSync(dir, 0o755);
  fs.writeFileSync(path.join(dir, 'wsp.sqlite'), '');
  fs.chmodSync(path.join(dir, 'wsp.sqlite'), 0o644);
  const server = await startServer({ WSP_DATA_DIR: dir });
  servers.push(server);
  assert.deepEqual(warnings(server).sort(), [`${dir} 0755`, `${path.join(dir, 'wsp.sqlite')} 0644`]);
  assert.equal(modeOf(dir), '755', 'left as the operator set it');
});
