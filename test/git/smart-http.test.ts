import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { GitStorage } from '../../src/git/git-storage.js';
import { startUploadPack, UPLOAD_PACK_TIMEOUT_MS } from '../../src/git/smart-http.js';
import { FetchSlots, DEFAULT_FETCH_SLOT_LIMITS } from '../../src/git/fetch-slots.js';
import type { GitError } from '../../src/git/run-git.js';
import { addLargeCommit, cloneRequest, eventually, gitProcessesOf } from './big-repository.js';

let root: string;
let gitDir: string;
let head: string;

before(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-smart-http-'));
  const repos = new GitStorage(root);
  await repos.create('inst_00000000000000000000000001');
  gitDir = repos.pathOf('inst_00000000000000000000000001');
  head = addLargeCommit(gitDir);
});
after(() => fs.rmSync(root, { recursive: true, force: true }));

describe('git upload-pack processes', () => {
  test('one fetch runs at most 10 minutes: a fetch past its time is killed and its answer ends', async () => {
    assert.equal(UPLOAD_PACK_TIMEOUT_MS, 10 * 60 * 1000);
    let exited = 0;
    let late: GitError | undefined;
    const started = Date.now();
    const out: Readable = await startUploadPack(gitDir, cloneRequest(head), { timeoutMs: 1500, onExit: () => exited++, onLateFailure: (err) => (late = err) });
    // The client reads nothing: git blocks on its full pipe, and only the time limit ends it.
    assert.ok(await eventually(() => gitProcessesOf(gitDir).length > 0, 5000), 'git runs');
    assert.ok(await eventually(() => exited === 1, 10_000), 'git was killed');
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 1400, `killed after its time, not before (${elapsed} ms)`);
    assert.ok(await eventually(() => gitProcessesOf(gitDir).length === 0, 5000), `no git process left: ${gitProcessesOf(gitDir).join(',')}`);
    // What was written before the kill can still be read, and then the answer ends, cut short.
    let bytes = 0;
    for await (const chunk of out) bytes += (chunk as Buffer).length;
    assert.ok(bytes > 0 && bytes < 16 * 1024 * 1024, `a cut answer (${bytes} bytes)`);
    assert.match(late?.message ?? '', /killed \(SIGKILL\)/);
  });

  test('destroying the answer (the client went away) kills git at once', async () => {
    let exited = 0;
    const out = await startUploadPack(gitDir, cloneRequest(head), { onExit: () => exited++ });
    assert.ok(await eventually(() => gitProcessesOf(gitDir).length > 0, 5000));
    out.destroy();
    assert.ok(await eventually(() => exited === 1, 5000), 'git exited');
    assert.ok(await eventually(() => gitProcessesOf(gitDir).length === 0, 5000), `no git process left: ${gitProcessesOf(gitDir).join(',')}`);
  });
});

describe('fetch slots', () => {
  test('at most perCredential for one credential, perProcess in all; a release frees one slot once', () => {
    assert.deepEqual(DEFAULT_FETCH_SLOT_LIMITS, { perProcess: 16, perCredential: 4, perUser: 4, perWorkspace: 8 });
    const slots = new FetchSlots({ perProcess: 3, perCredential: 2, perUser: 2, perWorkspace: 3 });
    const a1 = slots.acquire('a');
    const a2 = slots.acquire('a');
    assert.equal(typeof a1, 'function');
    assert.equal(typeof a2, 'function');
    assert.equal(slots.acquire('a'), 'credential');
    const b1 = slots.acquire('b');
    assert.equal(typeof b1, 'function');
    assert.equal(slots.acquire('c'), 'process');
    assert.equal(slots.acquire('a'), 'credential', 'the credential limit is reported first');
    (a1 as () => void)();
    (a1 as () => void)();
    assert.deepEqual([slots.inUse(), slots.inUse('a'), slots.inUse('b')], [2, 1, 1], 'a second release changes nothing');
    assert.equal(typeof slots.acquire('c'), 'function');
    assert.equal(slots.acquire('c'), 'process');
  });
});
