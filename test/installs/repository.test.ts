import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { Writable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { as, firstError } from '../helpers/harness.js';
import { useTestApp } from '../helpers/test-app.js';
import { installFixture } from './fixture.js';
import { withPipelineStatuses } from '../helpers/openapi.js';
import { dereferenced } from '../helpers/openapi-deref.js';

/**
 * GET /v1/installs/{id}/repository and the git smart-HTTP routes under its clone URL, through
 * app.inject: statuses, order of checks, bodies, headers. test/installs/repository-clone.test.ts
 * clones with the git command line against a listening server.
 */
const lines: string[] = [];
const logStream = new Writable({
  write(chunk, _enc, done) {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    done();
  },
});

let f: ReturnType<typeof installFixture>;

const h = useTestApp({
  logStream,
  config: { publicUrl: 'https://wsp.example.test' },
  setup: async () => {
    f = installFixture(h, s);
  },
});
const s = h.seeded;

const GIT_REQUEST = 'application/x-git-upload-pack-request';
const pkt = (text: string) => (Buffer.byteLength(text) + 4).toString(16).padStart(4, '0') + text;
/** A protocol v0 request for everything `main` holds: what `git clone` sends after info/refs. */
const wantAll = (sha: string) => Buffer.from(`${pkt(`want ${sha} side-band-64k ofs-delta no-progress agent=test\n`)}0000${pkt('done\n')}`);

/** The pack of a side-band answer: band 1 of every pkt-line after the NAK (how git cuts it into lines varies). */
function packOf(answer: Buffer): Buffer {
  const parts: Buffer[] = [];
  let pos = 0;
  while (pos + 4 <= answer.length) {
    const len = parseInt(answer.subarray(pos, pos + 4).toString('latin1'), 16);
    assert.ok(Number.isInteger(len), `a pkt-line length at ${pos}`);
    if (len === 0) {
      pos += 4;
      continue;
    }
    const line = answer.subarray(pos + 4, pos + len);
    if (line[0] === 1) parts.push(line.subarray(1));
    pos += len;
  }
  assert.equal(pos, answer.length, 'the answer is whole pkt-lines');
  const pack = Buffer.concat(parts);
  assert.equal(pack.subarray(0, 4).toString(), 'PACK');
  return pack;
}

const infoRefs = (id: string, service = 'git-upload-pack', headers: Record<string, string> = {}) =>
  h.app.inject({ method: 'GET', url: `/v1/installs/${id}/repository.git/info/refs?service=${service}`, headers: as(s.apiToken, undefined, headers) });
const uploadPack = (id: string, payload: Buffer | string, headers: Record<string, string> = {}) =>
  h.app.inject({ method: 'POST', url: `/v1/installs/${id}/repository.git/git-upload-pack`, headers: as(s.apiToken, undefined, { 'content-type': GIT_REQUEST, ...headers }), payload });

/** An install whose first render has committed. */
async function rendered() {
  const x = await f.installed();
  await h.app.jobs.runDue();
  const [render] = await f.renders(x.install.id);
  assert.equal(render.state, 'succeeded');
  return { ...x, render };
}

describe('GET /v1/installs/{id}/repository', () => {
  test('head is null before the first commit, then the head of main; clone_url is absolute under WSP_PUBLIC_URL', async () => {
    const x = await f.installed();
    const before = await f.call('GET', `/v1/installs/${x.install.id}/repository`);
    assert.equal(before.statusCode, 200, before.body);
    assert.deepEqual(before.json(), { head_commit_sha: null, clone_url: `https://wsp.example.test/v1/installs/${x.install.id}/repository.git` });
    await h.app.jobs.runDue();
    const after = await f.ok('GET', `/v1/installs/${x.install.id}/repository`);
    const [render] = await f.renders(x.install.id);
    assert.match(after.head_commit_sha, /^[0-9a-f]{40}$/);
    assert.equal(after.head_commit_sha, render.commit_sha);
    assert.equal(after.head_commit_sha, f.git(x.install.id, 'rev-parse', 'refs/heads/main'));
    assert.deepEqual(Object.keys(after).sort(), ['clone_url', 'head_commit_sha']);
  });

  test('bare or prefixed id; an over-long id 422; an unknown or another workspace’s install 404 (7002)', async () => {
    const { install } = await rendered();
    const bare = await f.ok('GET', `/v1/installs/${install.id.slice('inst_'.length)}/repository`);
    assert.equal(bare.clone_url, `https://wsp.example.test/v1/installs/${install.id}/repository.git`, 'the URL names the canonical id');
    const long = await f.call('GET', `/v1/installs/${'i'.repeat(56)}/repository`);
    assert.equal(long.statusCode, 422);
    assert.deepEqual(firstError(long.json()).path, ['path', 'id']);
    const unknown = await f.call('GET', '/v1/installs/inst_00000000000000000000000000/repository');
    assert.equal(unknown.statusCode, 404);
    assert.equal(firstError(unknown.json()).code, 7002);
    const other = await h.seed('Other');
    for (const [credential, workspace] of [
      [other.apiToken, undefined],
      [other.owner.session, other.workspaceId],
    ] as const) {
      const res = await h.app.inject({ method: 'GET', url: `/v1/installs/${install.id}/repository`, headers: as(credential, workspace) });
      assert.equal(res.statusCode, 404, res.body);
      assert.equal(firstError(res.json()).code, 7002);
      assert.ok(!res.body.includes(install.id.slice(5)), 'nothing of the install comes back');
    }
  });

  test('a session needs Service-Context (403 7021); no credential 401', async () => {
    const { install } = await rendered();
    const url = `/v1/installs/${install.id}/repository`;
    const none = await h.app.inject({ method: 'GET', url });
    assert.equal(none.statusCode, 401);
    const noContext = await h.app.inject({ method: 'GET', url, headers: as(s.member.session) });
    assert.equal(noContext.statusCode, 403);
    assert.equal(firstError(noContext.json()).code, 7021);
    const member = await h.app.inject({ method: 'GET', url, headers: as(s.member.session, s.workspaceId) });
    assert.equal(member.statusCode, 200);
  });
});

describe('git smart HTTP: info/refs', () => {
  test('protocol v0: the service line, then main and HEAD at the head; git content type and no-cache', async () => {
    const { install, render } = await rendered();
    const res = await infoRefs(install.id);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'application/x-git-upload-pack-advertisement');
    assert.equal(res.headers['cache-control'], 'no-cache');
    assert.ok(res.body.startsWith('001e# service=git-upload-pack\n0000'), res.body);
    assert.ok(res.body.includes(`${render.commit_sha} HEAD\0`), res.body);
    assert.ok(res.body.includes(`${render.commit_sha} refs/heads/main\n`), res.body);
    assert.ok(res.body.includes('symref=HEAD:refs/heads/main'), res.body);
    assert.ok(res.body.endsWith('0000'));
  });

  test('Git-Protocol reaches git only when it is exactly version=0, 1 or 2', async () => {
    const { install } = await rendered();
    const v2 = await infoRefs(install.id, 'git-upload-pack', { 'git-protocol': 'version=2' });
    assert.equal(v2.statusCode, 200);
    assert.ok(v2.body.startsWith('000eversion 2\n'), v2.body);
    assert.ok(v2.body.includes('ls-refs'), v2.body);
    const v1 = await infoRefs(install.id, 'git-upload-pack', { 'git-protocol': 'version=1' });
    assert.ok(v1.body.startsWith('001e# service=git-upload-pack\n0000000eversion 1\n'), v1.body);
    for (const odd of ['version=3', 'version=2:x=1', ' version=2', 'version=2\tx', 'VERSION=2', 'x'.repeat(200)]) {
      const res = await infoRefs(install.id, 'git-upload-pack', { 'git-protocol': odd });
      assert.equal(res.statusCode, 200, odd);
      assert.ok(res.body.startsWith('001e# service=git-upload-pack\n0000') && !res.body.includes('version '), `${odd}: ${res.body}`);
    }
    const long = await infoRefs(install.id, 'git-upload-pack', { 'git-protocol': 'x'.repeat(257) });
    assert.equal(long.statusCode, 422);
    assert.deepEqual(firstError(long.json()).path, ['headers', 'git-protocol']);
  });

  test('an empty repository advertises no ref (git clones it empty)', async () => {
    const x = await f.installed();
    const res = await infoRefs(x.install.id);
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '001e# service=git-upload-pack\n00000000', 'the service line, and no ref');
  });

  test('push is refused: service=git-receive-pack 403 (7020) after 404; no receive-pack route (404 7000)', async () => {
    const { install } = await rendered();
    const push = await infoRefs(install.id, 'git-receive-pack');
    assert.equal(push.statusCode, 403);
    assert.deepEqual([firstError(push.json()).code, firstError(push.json()).path], [7020, ['query', 'service']]);
    assert.match(firstError(push.json()).message, /read-only/);
    const unknown = await infoRefs('inst_00000000000000000000000000', 'git-receive-pack');
    assert.equal(unknown.statusCode, 404);
    const receive = await h.app.inject({
      method: 'POST',
      url: `/v1/installs/${install.id}/repository.git/git-receive-pack`,
      headers: as(s.apiToken, undefined, { 'content-type': 'application/x-git-receive-pack-request' }),
      payload: '0000',
    });
    assert.equal(receive.statusCode, 404);
    assert.equal(firstError(receive.json()).code, 7000);
  });

  test('service is required and only a git service (422 at the query); dumb HTTP is not served', async () => {
    const { install } = await rendered();
    for (const url of [`/v1/installs/${install.id}/repository.git/info/refs`, `/v1/installs/${install.id}/repository.git/info/refs?service=git-upload-archive`]) {
      const res = await h.app.inject({ method: 'GET', url, headers: as(s.apiToken) });
      assert.equal(res.statusCode, 422, url);
      assert.deepEqual(firstError(res.json()).path, ['query', 'service']);
    }
    const dumb = await h.app.inject({ method: 'GET', url: `/v1/installs/${install.id}/repository.git/HEAD`, headers: as(s.apiToken) });
    assert.equal(dumb.statusCode, 404);
  });
});

describe('git smart HTTP: git-upload-pack', () => {
  test('a v0 request for main answers NAK and a pack, streamed with the git content type and no-cache', async () => {
    const { install, render } = await rendered();
    const res = await uploadPack(install.id, wantAll(render.commit_sha));
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'application/x-git-upload-pack-result');
    assert.equal(res.headers['cache-control'], 'no-cache');
    assert.equal(res.headers['content-length'], undefined, 'streamed, not buffered');
    assert.ok(res.rawPayload.subarray(0, 8).equals(Buffer.from('0008NAK\n')), res.rawPayload.subarray(0, 40).toString());
    assert.ok(res.rawPayload.includes(Buffer.from('PACK')), 'a pack follows');
  });

  test('a gzip-encoded body is inflated (as git sends large requests); bad gzip 422, an inflated body over 8 MiB 413', async () => {
    const { install, render } = await rendered();
    const plain = await uploadPack(install.id, wantAll(render.commit_sha));
    const zipped = await uploadPack(install.id, gzipSync(wantAll(render.commit_sha)), { 'content-encoding': 'gzip' });
    assert.equal(zipped.statusCode, 200, zipped.body);
    assert.ok(packOf(zipped.rawPayload).equals(packOf(plain.rawPayload)), 'the same pack as for the plain request');
    const xgzip = await uploadPack(install.id, gzipSync(wantAll(render.commit_sha)), { 'content-encoding': 'x-gzip' });
    assert.ok(packOf(xgzip.rawPayload).equals(packOf(plain.rawPayload)), 'x-gzip is gzip');
    const bad = await uploadPack(install.id, Buffer.from('not gzip at all'), { 'content-encoding': 'gzip' });
    assert.equal(bad.statusCode, 422);
    assert.deepEqual(firstError(bad.json()).path, ['body']);
    const bomb = gzipSync(Buffer.alloc(9 * 1024 * 1024, 0x30));
    assert.ok(bomb.length < 1024 * 1024, 'small as sent');
    const big = await uploadPack(install.id, bomb, { 'content-encoding': 'gzip' });
    assert.equal(big.statusCode, 413, big.body);
    assert.equal(firstError(big.json()).code, 7005);
    const brotli = await uploadPack(install.id, wantAll(render.commit_sha), { 'content-encoding': 'br' });
    assert.equal(brotli.statusCode, 415);
    assert.deepEqual(firstError(brotli.json()).path, ['headers', 'content-encoding']);
  });

  test('a body over 1 MiB as sent is 413; JSON is 415; no body 422; each before the 404 of an unknown install', async () => {
    const { install } = await rendered();
    const elsewhere = await h.app.inject({ method: 'POST', url: '/v1/secrets', headers: as(s.apiToken, undefined, { 'content-type': GIT_REQUEST }), payload: '0000' });
    assert.equal(elsewhere.statusCode, 415, 'no other route takes git bodies');
    for (const id of [install.id, 'inst_00000000000000000000000000']) {
      const big = await uploadPack(id, Buffer.alloc(1024 * 1024 + 1, 0x30));
      assert.equal(big.statusCode, 413, big.body);
      assert.equal(firstError(big.json()).code, 7005);
      const json = await uploadPack(id, '{"want":"main"}', { 'content-type': 'application/json' });
      assert.equal(json.statusCode, 415, json.body);
      assert.deepEqual(firstError(json.json()).path, ['headers', 'content-type']);
      const empty = await h.app.inject({ method: 'POST', url: `/v1/installs/${id}/repository.git/git-upload-pack`, headers: as(s.apiToken) });
      assert.equal(empty.statusCode, 422, empty.body);
      assert.deepEqual(firstError(empty.json()).path, ['body']);
    }
  });

  test('a body git refuses is 422 at the body, without git’s message; a bare flush (git’s probe) answers empty', async () => {
    const { install } = await rendered();
    const garbage = await uploadPack(install.id, Buffer.from('zzzz nonsense'));
    assert.equal(garbage.statusCode, 422, garbage.body);
    assert.deepEqual(firstError(garbage.json()).path, ['body']);
    assert.doesNotMatch(garbage.body, /fatal|protocol error|line length|\/tmp|\.git\b/);
    const notOurs = await uploadPack(install.id, wantAll('1'.repeat(40)));
    assert.ok(notOurs.statusCode === 200 || notOurs.statusCode === 422, `${notOurs.statusCode} ${notOurs.body}`);
    assert.ok(!notOurs.body.includes(h.config.dataDir), 'no path on disk');
    const probe = await uploadPack(install.id, Buffer.from('0000'));
    assert.equal(probe.statusCode, 200, probe.body);
    assert.equal(probe.rawPayload.length, 0);
  });

  test('Idempotency-Key is held to its form, then not used: the same key twice serves twice', async () => {
    const { install, render } = await rendered();
    const one = await uploadPack(install.id, wantAll(render.commit_sha), { 'idempotency-key': 'fetch-1' });
    const two = await uploadPack(install.id, wantAll(render.commit_sha), { 'idempotency-key': 'fetch-1' });
    assert.deepEqual([one.statusCode, two.statusCode], [200, 200]);
    assert.equal(two.headers['idempotent-replayed'], undefined);
    assert.ok(packOf(two.rawPayload).equals(packOf(one.rawPayload)), 'the same pack, served again');
    const long = await uploadPack(install.id, wantAll(render.commit_sha), { 'idempotency-key': 'k'.repeat(65) });
    assert.equal(long.statusCode, 422);
    assert.deepEqual(firstError(long.json()).path, ['headers', 'idempotency-key']);
  });

  test('credentials: none 401, a session without Service-Context 403, another workspace 404, then the content type (401 before 415)', async () => {
    const { install, render } = await rendered();
    const url = `/v1/installs/${install.id}/repository.git/git-upload-pack`;
    const body = wantAll(render.commit_sha);
    const send = (headers: Record<string, string>) => h.app.inject({ method: 'POST', url, headers: { 'content-type': GIT_REQUEST, ...headers }, payload: body });
    assert.equal((await send({})).statusCode, 401);
    assert.equal((await h.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: '{}' })).statusCode, 401);
    const noContext = await send(as(s.member.session));
    assert.deepEqual([noContext.statusCode, firstError(noContext.json()).code], [403, 7021]);
    const other = await h.seed('Elsewhere');
    const foreign = await send(as(other.apiToken));
    assert.deepEqual([foreign.statusCode, firstError(foreign.json()).code], [404, 7002]);
    assert.equal((await send(as(s.member.session, s.workspaceId))).statusCode, 200);
  });
});

describe('a repository git cannot read', () => {
  test('503 in the envelope (7098) on every route, logged with the request, no path or git message in the answer', async () => {
    const { install, render } = await rendered();
    fs.rmSync(f.repoPath(install.id), { recursive: true, force: true });
    const from = lines.length;
    const answers = [await f.call('GET', `/v1/installs/${install.id}/repository`), await infoRefs(install.id), await uploadPack(install.id, wantAll(render.commit_sha))];
    for (const res of answers) {
      assert.equal(res.statusCode, 503, res.body);
      assert.equal(firstError(res.json()).code, 7098);
      assert.ok(!res.body.includes(h.config.dataDir) && !/fatal|\.git|stack/i.test(res.body), res.body);
    }
    const logged = lines.slice(from).filter((l) => l.includes('install repository unreadable'));
    assert.equal(logged.length, 3, lines.slice(from).join('\n'));
    assert.ok(logged.every((l) => JSON.parse(l).reqId && JSON.parse(l).installId === install.id));
  });
});

test('the OpenAPI document shows the three routes with their error statuses', async () => {
  const doc = dereferenced((await h.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json());
  const repo = doc.paths['/v1/installs/{id}/repository']?.get;
  assert.deepEqual(Object.keys(repo.responses).sort(), withPipelineStatuses('get', ['200', '401', '403', '404', '422', '503']));
  assert.deepEqual(Object.keys(repo.responses['200'].content['application/json'].schema.properties).sort(), ['clone_url', 'head_commit_sha']);
  const refs = doc.paths['/v1/installs/{id}/repository.git/info/refs']?.get;
  assert.deepEqual(Object.keys(refs.responses).sort(), withPipelineStatuses('get', ['200', '401', '403', '404', '422', '503'], { conditional: false }));
  assert.ok(refs.responses['200'].content['application/x-git-upload-pack-advertisement']);
  assert.ok(refs.parameters.some((p: { in: string; name: string; required: boolean }) => p.in === 'query' && p.name === 'service' && p.required));
  const pack = doc.paths['/v1/installs/{id}/repository.git/git-upload-pack']?.post;
  assert.deepEqual(Object.keys(pack.responses).sort(), withPipelineStatuses('post', ['200', '401', '403', '404', '413', '415', '422', '503']));
  assert.deepEqual(Object.keys(pack.requestBody.content), ['application/x-git-upload-pack-request']);
  assert.ok(pack.responses['200'].content['application/x-git-upload-pack-result']);
  assert.match(refs.description, /Service-Context/);
});
