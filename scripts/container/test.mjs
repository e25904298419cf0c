#!/usr/bin/env node
// `npm run test:container`: the Dockerfile and compose.yaml, built and run for real with Podman,
// driven over HTTP on 127.0.0.1 only. No image registry is reachable from the machines this runs
// on, so the base images are made here first (scripts/container/base-image.sh: Debian's packages
// and this machine's Node) and passed to the Dockerfile, unchanged, as NODE_IMAGE and
// DEBIAN_IMAGE; compose.yaml is run as written, with scripts/container/compose.test.yaml naming
// the images made here.
//
//   1. the image: built, its size under 250 MB, its labels, user, volume, port, health check,
//      entrypoint and command as the Dockerfile says;
//   2. one container on SQLite, as the README starts it: ready, healthy by its own health check,
//      set up with the setup code of its log, a sign-in, a secret, a render; tini as PID 1 and no
//      zombie git process; `wsp admin` from the same image; SIGTERM with a request in flight: the
//      request is answered and the process exits 0; a new container on the same volume has it all;
//      the backup, restored into a new volume with docs/operations.md's commands, serves it too;
//   3. the compose stack on PostgreSQL (two servers, a worker, Caddy): a secret written on one
//      server and read on the other, a render committed by the worker (the servers run no jobs)
//      and read back through the other server from the shared repository volume, the guide's
//      backup commands (pg_dump, a tar of the repositories), SIGTERM to a
//      server with a request in flight while the proxy keeps answering, and the whole stack
//      taken down and brought up again with its data.
//
// The result goes into docs/operations.md ("The container test"). It takes 5 to 15 minutes (the
// first run also makes the base images: 3 more); it is not part of `npm test`.
// Podman runs with runc and explicit ulimits: on these machines crun fails on their cgroups and
// the default limits (`--runtime runc --ulimit nofile=1024:1024 --ulimit nproc=1000:1000`).
//
// Environment: WSP_CONTAINER_KEEP=1 leaves the containers and volumes for a look afterwards;
// WSP_CONTAINER_REBUILD_BASE=1 makes the base images again; WSP_CONTAINER_NO_RECORD=1 leaves
// docs/operations.md alone.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { promisify } from 'node:util';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const BASE = {
  debian: 'localhost/wsp-test/debian:bookworm-slim',
  node: 'localhost/wsp-test/node:20-bookworm-slim',
  postgres: 'localhost/wsp-test/postgres:15-bookworm',
  caddy: 'localhost/wsp-test/caddy:2-bookworm',
};
/** compose.yaml names the image workspace-platform:${WSP_VERSION}; this run's is that with `test`. */
const VERSION_TAG = 'test';
const IMAGE = `localhost/workspace-platform:${VERSION_TAG}`;
const MAX_IMAGE_BYTES = 250_000_000;
const PODMAN = ['podman', '--runtime', 'runc'];
const LIMITS = ['--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1000:1000'];
const SQLITE = { name: 'wsp-ct-sqlite', volume: 'wsp-ct-sqlite-data', restoredName: 'wsp-ct-sqlite-restored', restored: 'wsp-ct-sqlite-restored' };
const PROJECT = 'wsp-ct';
const KEEP = process.env.WSP_CONTAINER_KEEP === '1';
const PASSWORD = 'a long container test password';

const run = promisify(execFile);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const started = Date.now();
const checks = [];
const facts = {};

// ---------------------------------------------------------------------------------------------
// Commands

/** Runs a command to its end; its output, or an error with it. */
async function sh(cmd, args, opts = {}) {
  try {
    const { stdout, stderr } = await run(cmd, args, { maxBuffer: 256 * 1024 * 1024, cwd: ROOT, ...opts });
    return { stdout, stderr };
  } catch (err) {
    if (opts.allowFail) return { stdout: err.stdout ?? '', stderr: err.stderr ?? '', code: err.code };
    throw new Error(`${cmd} ${args.join(' ')} failed (${err.code}):\n${String(err.stderr ?? '').slice(-4000)}\n${String(err.stdout ?? '').slice(-2000)}`);
  }
}
const podman = (args, opts) => sh(PODMAN[0], [...PODMAN.slice(1), ...args], opts);

/** A long command, its output streamed into a log file; rejects with that file's tail. */
function streamed(cmd, args, logFile, env = process.env) {
  return new Promise((resolve, reject) => {
    const out = fs.openSync(logFile, 'a');
    const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', out, out] });
    child.on('error', reject);
    child.on('exit', (code) => {
      fs.closeSync(out);
      if (code === 0) resolve();
      else reject(new Error(`${cmd} ${args.slice(0, 4).join(' ')} ... exited ${code}; the end of ${logFile}:\n${tail(logFile, 40)}`));
    });
  });
}
/** A command fed `input` on its standard input (`... < file`). */
function withInput(input, cmd, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${stderr.slice(-2000)}`))));
    child.stdin.end(input);
  });
}
const tail = (file, lines) => fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');

/** The compose project's containers, and the anonymous volumes they hold (each server's /data). */
async function projectContainers() {
  const { stdout } = await podman(['ps', '-a', '--filter', `label=io.podman.compose.project=${PROJECT}`, '--format', '{{.Names}}'], { allowFail: true });
  return stdout.split('\n').filter(Boolean);
}
async function anonymousVolumes(containers) {
  if (containers.length === 0) return [];
  const inspected = JSON.parse((await podman(['inspect', ...containers])).stdout);
  return inspected.flatMap((c) => (c.Mounts ?? []).filter((m) => m.Type === 'volume' && /^[0-9a-f]{64}$/.test(m.Name ?? '')).map((m) => m.Name));
}
/** podman-compose 1.0's `down` removes its containers without their anonymous volumes: this does. */
async function composeDown(args, env) {
  const volumes = await anonymousVolumes(await projectContainers());
  await compose(['down', ...args], env);
  for (const volume of volumes) await podman(['volume', 'rm', '-f', volume], { allowFail: true });
}

function compose(args, env) {
  return sh('podman-compose', ['--podman-args=--runtime runc', '-p', PROJECT, '-f', 'compose.yaml', '-f', 'scripts/container/compose.test.yaml', ...args], { env: { ...process.env, ...env } });
}

async function freePort() {
  const server = net.createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  return port;
}

// ---------------------------------------------------------------------------------------------
// Checks and HTTP

/** One named check, timed; its failure ends the run. */
async function check(name, fn) {
  const t0 = Date.now();
  process.stdout.write(`-- ${name} ... `);
  try {
    const detail = await fn();
    const ms = Date.now() - t0;
    checks.push({ name, ok: true, ms, detail: detail ?? '' });
    process.stdout.write(`ok (${(ms / 1000).toFixed(1)} s)${detail ? `: ${detail}` : ''}\n`);
    return detail;
  } catch (err) {
    checks.push({ name, ok: false, ms: Date.now() - t0, detail: String(err.message ?? err).split('\n')[0] });
    process.stdout.write('FAILED\n');
    throw err;
  }
}

function assert(condition, message) {
  if (!condition) throw new Error(message);
}

/** One call of the API: JSON in and out. */
async function api(base, method, url, { token, ws, body, headers = {} } = {}) {
  const h = { ...headers };
  if (token) h.authorization = `Bearer ${token}`;
  if (ws) h['service-context'] = ws;
  if (body !== undefined) h['content-type'] = 'application/json';
  const res = await fetch(base + url, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text, headers: res.headers };
}
async function must(promise, status, what) {
  const r = await promise;
  assert(r.status === status, `${what}: ${r.status}, not ${status}: ${r.text.slice(0, 500)}`);
  return r.json;
}

async function waitReady(base, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const r = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(3000) });
      if (r.ok) return;
      last = `${r.status} ${await r.text()}`;
    } catch (err) {
      last = String(err.cause?.code ?? err.message);
    }
    await sleep(500);
  }
  throw new Error(`${what} not ready at ${base}/readyz after ${timeoutMs / 1000} s (last: ${last})`);
}

/**
 * The image's health check, run by hand (Podman runs it on a timer only under systemd). A
 * container is unhealthy after 3 failures in a row (the Dockerfile's `--retries`): so is it here,
 * which a loaded machine needs (one Node start can outlast the timeout there).
 */
async function healthy(container) {
  let last = '';
  for (let attempt = 1; attempt <= 3; attempt++) {
    const r = await podman(['healthcheck', 'run', container], { allowFail: true });
    if (r.code === undefined) return attempt;
    last = `${r.stdout}${r.stderr}`.trim();
    await sleep(2000);
  }
  throw new Error(`${container}'s health check failed 3 times: ${last}`);
}

async function logsOf(container) {
  const { stdout, stderr } = await podman(['logs', container], { allowFail: true });
  return `${stdout}${stderr}`;
}

/** The setup codes a container's log shows (each start on a database without a user logs one). */
const setupCodes = (log) => [...log.matchAll(/"setup_code":"([A-Z0-9-]+)"/g)].map((m) => m[1]);

/** Makes the first owner with a code from the logs, signs in with a password: a bearer session. */
async function setUpAndSignIn(base, codes) {
  assert(codes.length > 0, 'no setup code in the logs');
  let done;
  for (const code of codes) {
    const r = await api(base, 'POST', '/v1/setup', { body: { code, email: 'owner@example.com', name: 'Owner', password: PASSWORD, workspace_name: 'Containers' } });
    if (r.status === 201) {
      done = r.json;
      break;
    }
    assert(r.status === 403, `POST /v1/setup: ${r.status} ${r.text.slice(0, 300)}`);
  }
  assert(done, `none of the setup codes in the logs (${codes.length}) was accepted`);
  return { ws: done.workspace_id, ...(await signIn(base)) };
}
async function signIn(base) {
  const s = await must(api(base, 'POST', '/v1/sessions', { body: { email: 'owner@example.com', password: PASSWORD } }), 201, 'sign in');
  return { token: s.token };
}

/** A package of one template, an install of it, and its first render once it succeeded. */
async function renderInstall(base, who, name) {
  const pkg = await must(api(base, 'POST', '/v1/packages', { ...who, body: { name } }), 201, 'create a package');
  const version = await must(
    api(base, 'POST', `/v1/packages/${pkg.id}/versions`, { ...who, body: { semver: '1.0.0', files: { 'app.yaml': 'name: {{name}}\nreplicas: {{replicas}}\n' } } }),
    201,
    'publish a version',
  );
  const inst = await must(api(base, 'POST', '/v1/installs', { ...who, body: { name, package_id: pkg.id, version_id: version.id, values: { name, replicas: 3 } } }), 201, 'create an install');
  const renderId = inst.last_render?.id;
  assert(renderId, 'the install answered without its first render');
  const deadline = Date.now() + 90_000;
  for (;;) {
    const now = await must(api(base, 'GET', `/v1/installs/${inst.id}`, who), 200, 'read the install');
    if (now.last_render?.state === 'succeeded') break;
    assert(!['failed', 'superseded'].includes(now.last_render?.state), `render ${renderId}: ${now.last_render?.state} ${now.last_render?.error ?? ''}`);
    assert(Date.now() < deadline, `render ${renderId} still ${now.last_render?.state} after 90 s`);
    await sleep(300);
  }
  const render = await must(api(base, 'GET', `/v1/renders/${renderId}`, who), 200, 'read the render');
  assert(/^[0-9a-f]{40}$/.test(render.commit_sha ?? ''), `render ${renderId} has no commit`);
  return { installId: inst.id, renderId, commit: render.commit_sha };
}
async function renderedFile(base, who, renderId) {
  const files = await must(api(base, 'GET', `/v1/renders/${renderId}/files`, who), 200, "read the render's files");
  return files.files.find((f) => f.path === 'app.yaml')?.content;
}

async function writeSecret(base, who, name, value) {
  const secret = await must(api(base, 'POST', '/v1/secrets', { ...who, body: { name } }), 201, 'create a secret');
  const version = await must(api(base, 'POST', `/v1/secrets/${secret.id}/versions`, { ...who, body: { data: Buffer.from(value).toString('base64') } }), 201, 'add a secret version');
  return { secretId: secret.id, versionId: version.id };
}
async function readSecret(base, who, s) {
  const r = await must(api(base, 'GET', `/v1/secrets/${s.secretId}/versions/${s.versionId}:access`, who), 200, 'access the secret version');
  return Buffer.from(r.data, 'base64').toString();
}

/**
 * `podman stop` (SIGTERM, then SIGKILL after 40 s) while a request is in flight: a POST whose
 * body is half sent when the signal comes and the rest a second later. The request must be
 * answered (201), and the container must exit 0 well before the SIGKILL. (Not `podman kill`:
 * compose's `restart: unless-stopped` would start the container again.)
 */
async function sigtermWithRequestInFlight(port, who, container) {
  const body = JSON.stringify({ name: `in-flight-${randomBytes(3).toString('hex')}` });
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let answer = '';
  socket.on('data', (chunk) => (answer += chunk));
  const closed = once(socket, 'close');
  socket.write(
    `POST /v1/secrets HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${who.token}\r\nService-Context: ${who.ws}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 8)}`,
  );
  await sleep(300);
  const t0 = Date.now();
  const stopped = podman(['stop', '-t', '40', container]).then(() => Date.now() - t0);
  await sleep(1000);
  socket.write(body.slice(8));
  await Promise.race([closed, sleep(20_000)]);
  socket.destroy();
  const status = /^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1];
  assert(status === '201', `the request in flight at SIGTERM was answered ${status ?? 'not at all'}: ${answer.slice(0, 300)}`);
  const seconds = ((await stopped) / 1000).toFixed(1);
  const [state] = JSON.parse((await podman(['inspect', container])).stdout);
  const exit = state.State.ExitCode;
  assert(exit === 0, `${container} exited ${exit} after SIGTERM`);
  assert(Number(seconds) < 30, `${container} took ${seconds} s to stop`);
  const log = await logsOf(container);
  assert(/shutting down: finishing/.test(log), `${container}'s log does not say it drained`);
  return `the request in flight answered 201; exit 0, stopped in ${seconds} s`;
}

// ---------------------------------------------------------------------------------------------
// The run

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-container-test-'));
const logFile = path.join(work, 'build.log');
/** The SQLite backup and its master key, taken out of the container as the guide says. */
const backups = path.join(work, 'backups');
fs.mkdirSync(backups);

async function prerequisites() {
  await check('podman, runc, podman-compose and mmdebstrap are installed', async () => {
    const missing = [];
    for (const tool of ['podman', 'runc', 'podman-compose', 'mmdebstrap']) {
      if ((await sh('sh', ['-c', `command -v ${tool}`], { allowFail: true })).stdout.trim() === '') missing.push(tool);
    }
    assert(missing.length === 0, `missing: ${missing.join(', ')} (apt-get install -y podman runc podman-compose mmdebstrap)`);
    facts.podman = (await sh('podman', ['--version'])).stdout.trim();
    facts.runc = (await sh('runc', ['--version'])).stdout.split('\n')[0].trim();
    facts.compose =
      (await sh('podman-compose', ['--version'], { allowFail: true })).stdout
        .split('\n')
        .find((l) => /podman-compose/i.test(l))
        ?.replace(/\s+/g, ' ')
        .trim() ?? 'podman-compose';
    facts.node = process.version;
    facts.kernel = os.release();
    facts.cpus = os.cpus().length;
  });
}

async function buildImages() {
  await check("base images from Debian packages and this machine's Node (made once, then kept)", async () => {
    const t0 = Date.now();
    await streamed('bash', ['scripts/container/base-image.sh', BASE.debian, BASE.node, BASE.postgres, BASE.caddy], logFile);
    const seconds = Math.round((Date.now() - t0) / 1000);
    return `${BASE.node} on ${BASE.debian}, ${seconds < 5 ? 'kept from an earlier run' : `made in ${seconds} s`}`;
  });
  await check('the Dockerfile, unchanged, built with NODE_IMAGE and DEBIAN_IMAGE', async () => {
    const t0 = Date.now();
    const revision = (await sh('git', ['rev-parse', 'HEAD'], { allowFail: true })).stdout.trim() || 'unknown';
    await streamed(
      PODMAN[0],
      [
        ...PODMAN.slice(1),
        'build',
        '--network',
        'host',
        ...LIMITS,
        '--format',
        'docker',
        '--build-arg',
        `NODE_IMAGE=${BASE.node}`,
        '--build-arg',
        `DEBIAN_IMAGE=${BASE.debian}`,
        '--build-arg',
        `REVISION=${revision}`,
        '--build-arg',
        `CREATED=${new Date().toISOString()}`,
        '-t',
        IMAGE,
        '.',
      ],
      logFile,
    );
    facts.buildSeconds = Math.round((Date.now() - t0) / 1000);
    return `${facts.buildSeconds} s`;
  });
  await check('the image: under 250 MB; labels, non-root user, /data, port 8080, health check, tini, `wsp serve`', async () => {
    const [inspect] = JSON.parse((await podman(['image', 'inspect', IMAGE])).stdout);
    const config = inspect.Config;
    facts.imageBytes = inspect.Size;
    assert(inspect.Size < MAX_IMAGE_BYTES, `the image takes ${inspect.Size} bytes, not under ${MAX_IMAGE_BYTES}`);
    const labels = config.Labels ?? {};
    for (const label of ['title', 'description', 'licenses', 'version', 'revision', 'created', 'source', 'documentation']) {
      assert(labels[`org.opencontainers.image.${label}`], `no label org.opencontainers.image.${label}`);
    }
    assert(labels['org.opencontainers.image.licenses'] === 'Apache-2.0', 'the licence label is not Apache-2.0');
    assert(config.User === 'wsp', `the user is ${config.User}`);
    assert(Object.keys(config.Volumes ?? {}).includes('/data'), 'no volume /data');
    assert(Object.keys(config.ExposedPorts ?? {}).includes('8080/tcp'), 'port 8080 not exposed');
    assert((config.Env ?? []).includes('WSP_DATA_DIR=/data'), 'WSP_DATA_DIR is not /data');
    // Podman shows the health check beside the config rather than in it.
    assert(JSON.stringify((config.Healthcheck ?? inspect.Healthcheck)?.Test ?? []).includes('/readyz'), 'the health check does not ask /readyz');
    assert(JSON.stringify(config.Entrypoint) === JSON.stringify(['/usr/bin/tini', '--']), `the entrypoint is ${JSON.stringify(config.Entrypoint)}`);
    assert(JSON.stringify(config.Cmd) === JSON.stringify(['wsp', 'serve']), `the command is ${JSON.stringify(config.Cmd)}`);
    const saved = path.join(work, 'image.tar');
    await podman(['save', '--format', 'docker-archive', '-o', saved, IMAGE]);
    const gz = await sh('sh', ['-c', `gzip -1 -c '${saved}' | wc -c`]);
    facts.compressedBytes = Number(gz.stdout.trim());
    fs.rmSync(saved);
    return `${(inspect.Size / 1e6).toFixed(1)} MB (${(facts.compressedBytes / 1e6).toFixed(1)} MB compressed)`;
  });
}

async function singleContainer() {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  // As the README starts it, plus what these machines need and on 127.0.0.1 only.
  const start = () => podman(['run', '-d', '--name', SQLITE.name, ...LIMITS, '-p', `127.0.0.1:${port}:8080`, '-v', `${SQLITE.volume}:/data`, '--stop-timeout', '40', IMAGE]);
  let who;
  let secret;
  let rendered;
  await check('SQLite: one container starts and is ready', async () => {
    await start();
    await waitReady(base, 60_000, 'the container');
  });
  await check("SQLite: the image's own health check passes", async () => {
    const attempts = await healthy(SQLITE.name);
    return attempts > 1 ? `at attempt ${attempts}` : '';
  });
  await check('SQLite: set up with the setup code of the log, then sign in', async () => {
    who = await setUpAndSignIn(base, setupCodes(await logsOf(SQLITE.name)));
  });
  await check('SQLite: a secret written and read back', async () => {
    secret = await writeSecret(base, who, 'db-password', 'sqlite secret value');
    assert((await readSecret(base, who, secret)) === 'sqlite secret value', 'the secret read back differs');
  });
  await check("SQLite: an install's render is committed", async () => {
    rendered = await renderInstall(base, who, 'sqlite-app');
    const file = await renderedFile(base, who, rendered.renderId);
    assert(file === 'name: sqlite-app\nreplicas: 3\n', `the rendered file is ${JSON.stringify(file)}`);
    return `commit ${rendered.commit.slice(0, 12)}`;
  });
  await check('SQLite: PID 1 is tini, and no process is a zombie after the git work', async () => {
    const { stdout } = await podman(['exec', SQLITE.name, 'sh', '-c', 'tr "\\0" " " < /proc/1/cmdline; echo; for s in /proc/[0-9]*/status; do grep -H "^State:.*Z" "$s"; done; true']);
    const [pid1, ...zombies] = stdout.trim().split('\n');
    assert(pid1.startsWith('/usr/bin/tini -- wsp serve'), `PID 1 is ${pid1}`);
    assert(zombies.filter(Boolean).length === 0, `zombies: ${zombies.join('; ')}`);
  });
  await check('SQLite: `wsp admin` runs from the same image (a backup while the server runs)', async () => {
    await podman(['exec', SQLITE.name, 'wsp', 'admin', 'backup', '--to', '/data/backup.tar']);
    const { stdout } = await podman(['exec', SQLITE.name, 'sh', '-c', 'tar -tf /data/backup.tar | head -50']);
    assert(/wsp\.sqlite/.test(stdout), `the backup does not hold the database: ${stdout.slice(0, 300)}`);
    assert(!/master\.key/.test(stdout), 'the backup holds the master key');
    // Taken out, with the key kept apart, as docs/operations.md says (the restore check uses them).
    await podman(['cp', `${SQLITE.name}:/data/backup.tar`, path.join(backups, 'backup.tar')]);
    fs.writeFileSync(path.join(backups, 'master.key.saved'), (await podman(['exec', SQLITE.name, 'cat', '/data/master.key'])).stdout, { mode: 0o600 });
    return 'wsp admin backup --to /data/backup.tar';
  });
  await check('SQLite: SIGTERM with a request in flight', () => sigtermWithRequestInFlight(port, who, SQLITE.name));
  await check('SQLite: a new container on the same volume has the data (sign-in, secret, render)', async () => {
    await podman(['rm', SQLITE.name]);
    await start();
    await waitReady(base, 60_000, 'the new container');
    const again = { ws: who.ws, ...(await signIn(base)) };
    assert((await readSecret(base, again, secret)) === 'sqlite secret value', 'the secret differs after the restart');
    assert((await renderedFile(base, again, rendered.renderId)) === 'name: sqlite-app\nreplicas: 3\n', 'the render differs after the restart');
    assert(setupCodes(await logsOf(SQLITE.name)).length === 0, 'a setup code was logged although a user exists');
  });
  await check("SQLite: the backup restored into a new volume (docs/operations.md's commands) serves the same data", async () => {
    const restoredPort = await freePort();
    const restored = `http://127.0.0.1:${restoredPort}`;
    await withInput(fs.readFileSync(path.join(backups, 'backup.tar')), PODMAN[0], [
      ...PODMAN.slice(1),
      'run',
      '--rm',
      '-i',
      ...LIMITS,
      '-v',
      `${SQLITE.restored}:/data`,
      IMAGE,
      'sh',
      '-c',
      'cat > /tmp/backup.tar && wsp admin restore --from /tmp/backup.tar --data-dir /data',
    ]);
    await withInput(fs.readFileSync(path.join(backups, 'master.key.saved')), PODMAN[0], [
      ...PODMAN.slice(1),
      'run',
      '--rm',
      '-i',
      ...LIMITS,
      '-v',
      `${SQLITE.restored}:/data`,
      IMAGE,
      'sh',
      '-c',
      'umask 077; cat > /data/master.key',
    ]);
    await podman(['run', '-d', '--name', SQLITE.restoredName, ...LIMITS, '-p', `127.0.0.1:${restoredPort}:8080`, '-v', `${SQLITE.restored}:/data`, IMAGE]);
    await waitReady(restored, 60_000, 'the restored container');
    const again = { ws: who.ws, ...(await signIn(restored)) };
    assert((await readSecret(restored, again, secret)) === 'sqlite secret value', 'the secret differs in the restored container');
    assert((await renderedFile(restored, again, rendered.renderId)) === 'name: sqlite-app\nreplicas: 3\n', 'the render differs in the restored container');
  });
}

async function composeStack() {
  const ports = { proxy: await freePort(), one: await freePort(), two: await freePort() };
  const keyFile = path.join(work, 'master.key');
  fs.writeFileSync(keyFile, `${randomBytes(32).toString('base64')}\n`, { mode: 0o644 });
  const env = {
    WSP_VERSION: VERSION_TAG,
    POSTGRES_PASSWORD: randomBytes(12).toString('hex'),
    WSP_HTTP_PORT: `127.0.0.1:${ports.proxy}`,
    WSP_PUBLIC_URL: `http://127.0.0.1:${ports.proxy}`,
    WSP_TEST_MASTER_KEY_FILE: keyFile,
    WSP_TEST_POSTGRES_IMAGE: BASE.postgres,
    WSP_TEST_CADDY_IMAGE: BASE.caddy,
    WSP_TEST_SERVER_1_PORT: String(ports.one),
    WSP_TEST_SERVER_2_PORT: String(ports.two),
  };
  const proxy = `http://127.0.0.1:${ports.proxy}`;
  const one = `http://127.0.0.1:${ports.one}`;
  const two = `http://127.0.0.1:${ports.two}`;
  const name = (service) => `${PROJECT}_${service}_1`;
  let who;
  let secret;
  let rendered;
  await check('compose: PostgreSQL, two servers, a worker and Caddy come up; every server ready, and the proxy', async () => {
    await compose(['up', '-d', '--no-build'], env);
    await waitReady(one, 180_000, 'server-1');
    await waitReady(two, 60_000, 'server-2');
    await waitReady(proxy, 60_000, 'the proxy');
    for (const service of ['server-1', 'server-2']) await healthy(name(service));
    const log = await logsOf(name('server-1'));
    assert(/"engine":"postgres"/.test(log) && /"worker":false/.test(log), 'server-1 is not a PostgreSQL server without a worker');
  });
  await check("compose: set up through the proxy with a setup code from the servers' logs, sign in", async () => {
    const codes = [...setupCodes(await logsOf(name('server-1'))), ...setupCodes(await logsOf(name('server-2')))];
    who = await setUpAndSignIn(proxy, codes.reverse());
    return `${codes.length} codes logged`;
  });
  await check('compose: a secret written on server-1 is read on server-2', async () => {
    secret = await writeSecret(one, who, 'shared-password', 'written on server-1');
    assert((await readSecret(two, who, secret)) === 'written on server-1', 'server-2 read another value');
  });
  await check('compose: a render asked of server-2 is committed by the worker and read through server-1', async () => {
    rendered = await renderInstall(two, who, 'compose-app');
    assert((await renderedFile(one, who, rendered.renderId)) === 'name: compose-app\nreplicas: 3\n', 'server-1 reads another file');
    // In the shared volume, as the worker wrote it.
    const { stdout } = await podman(['exec', name('worker'), 'git', '--git-dir', `/repos/${rendered.installId}.git`, 'cat-file', '-t', rendered.commit]);
    assert(stdout.trim() === 'commit', `the worker's volume has no commit ${rendered.commit}`);
    return `commit ${rendered.commit.slice(0, 12)}`;
  });
  await check('compose: the backup commands of docs/operations.md (pg_dump in db, tar of /repos in the worker)', async () => {
    const pod = PODMAN.join(' ');
    const dump = await sh('sh', ['-c', `${pod} exec ${name('db')} pg_dump -U wsp --format=custom wsp | wc -c`]);
    assert(Number(dump.stdout.trim()) > 10_000, `pg_dump wrote ${dump.stdout.trim()} bytes`);
    const listed = await sh('sh', ['-c', `${pod} exec ${name('worker')} tar -cf - --warning=no-file-changed -C / repos | tar -tf - | grep -c '^repos/${rendered.installId}.git/'`]);
    assert(Number(listed.stdout.trim()) > 5, `the repositories' tar holds ${listed.stdout.trim()} entries of the install's repository`);
    return `a dump of ${(Number(dump.stdout.trim()) / 1000).toFixed(0)} kB; the install's repository in the tar`;
  });
  await check('compose: SIGTERM to server-1 with a request in flight; the proxy answers through server-2', async () => {
    const result = await sigtermWithRequestInFlight(ports.one, who, name('server-1'));
    for (let i = 0; i < 6; i++) await must(api(proxy, 'GET', `/v1/secrets/${secret.secretId}`, who), 200, 'read through the proxy while server-1 is stopped');
    return result;
  });
  await check('compose: down and up again: the data is kept (sign-in, secret, render)', async () => {
    await composeDown(['-t', '40'], env);
    await compose(['up', '-d', '--no-build'], env);
    await waitReady(one, 120_000, 'server-1');
    await waitReady(two, 60_000, 'server-2');
    await waitReady(proxy, 60_000, 'the proxy');
    const again = { ws: who.ws, ...(await signIn(proxy)) };
    assert((await readSecret(two, again, secret)) === 'written on server-1', 'the secret differs after the restart');
    assert((await renderedFile(one, again, rendered.renderId)) === 'name: compose-app\nreplicas: 3\n', 'the render differs after the restart');
  });
}

async function cleanUp() {
  if (KEEP) {
    console.log(`-- kept: container ${SQLITE.name}, volume ${SQLITE.volume}, compose project ${PROJECT} (podman-compose -p ${PROJECT} ... down -v)`);
    return;
  }
  for (const container of [SQLITE.name, SQLITE.restoredName]) await podman(['rm', '-f', '-v', '-t', '0', container], { allowFail: true });
  for (const volume of [SQLITE.volume, SQLITE.restored]) await podman(['volume', 'rm', '-f', volume], { allowFail: true });
  // Nothing of the project is wanted any more: its containers at once (the test has checked
  // their shutdown), their volumes, and the network podman-compose 1.0 leaves behind.
  for (const container of await projectContainers()) await podman(['rm', '-f', '-v', '-t', '0', container], { allowFail: true });
  await compose(['down', '-v'], {
    POSTGRES_PASSWORD: 'x',
    WSP_TEST_MASTER_KEY_FILE: path.join(work, 'master.key'),
    WSP_TEST_SERVER_1_PORT: '1',
    WSP_TEST_SERVER_2_PORT: '2',
    WSP_TEST_POSTGRES_IMAGE: BASE.postgres,
    WSP_TEST_CADDY_IMAGE: BASE.caddy,
  }).catch(() => undefined);
  await podman(['network', 'rm', '-f', `${PROJECT}_default`], { allowFail: true });
}

/** docs/operations.md's block between its markers: this run's outcome, each check and its time. */
function record(outcome) {
  if (process.env.WSP_CONTAINER_NO_RECORD === '1') return;
  const file = path.join(ROOT, 'docs/operations.md');
  const doc = fs.readFileSync(file, 'utf8');
  const begin = '<!-- test:container:begin -->';
  const end = '<!-- test:container:end -->';
  if (!doc.includes(begin) || !doc.includes(end)) return;
  const mb = (bytes) => (bytes ? `${(bytes / 1e6).toFixed(1)} MB` : 'not measured');
  const lines = [
    begin,
    `Latest run: **${outcome}**, ${new Date().toISOString().slice(0, 10)}, ${((Date.now() - started) / 60000).toFixed(1)} minutes; ${facts.podman ?? 'podman'} with ${facts.runc ?? 'runc'}, ${facts.compose ?? 'podman-compose'}, Node ${facts.node ?? process.version}, Linux ${facts.kernel ?? os.release()}, ${facts.cpus ?? os.cpus().length} CPUs. Image: ${mb(facts.imageBytes)} (${mb(facts.compressedBytes)} as a gzip-compressed archive), built in ${facts.buildSeconds ?? '?'} s.`,
    '',
    '| check | result | seconds |',
    '|---|---|---|',
    ...checks.map((c) => `| ${c.name.replace(/\|/g, '\\|')} | ${c.ok ? 'passed' : 'FAILED'}${c.detail ? `: ${c.detail.replace(/\|/g, '\\|')}` : ''} | ${(c.ms / 1000).toFixed(1)} |`),
    end,
  ];
  fs.writeFileSync(file, doc.slice(0, doc.indexOf(begin)) + lines.join('\n') + doc.slice(doc.indexOf(end) + end.length));
}

let failure;
try {
  await prerequisites();
  await cleanUp();
  await buildImages();
  await singleContainer();
  await composeStack();
} catch (err) {
  failure = err;
  console.error(`\n${err.stack ?? err}`);
  for (const container of [SQLITE.name, SQLITE.restoredName, `${PROJECT}_server-1_1`, `${PROJECT}_server-2_1`, `${PROJECT}_worker_1`, `${PROJECT}_proxy_1`, `${PROJECT}_db_1`]) {
    const log = await logsOf(container);
    if (log.trim()) console.error(`\n== the end of ${container}'s log:\n${log.split('\n').slice(-25).join('\n')}`);
  }
}
await cleanUp();
record(failure ? 'failed' : 'passed');
console.log(
  `\n${failure ? 'FAILED' : 'passed'}: ${checks.filter((c) => c.ok).length} of ${checks.length} checks, ${((Date.now() - started) / 60000).toFixed(1)} minutes${failure ? ` (build log: ${logFile})` : ''}`,
);
if (!failure) fs.rmSync(work, { recursive: true, force: true });
process.exit(failure ? 1 : 0);
