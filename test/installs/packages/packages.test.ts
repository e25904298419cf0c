import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError } from '../../helpers/harness.js';
import { useTestApp } from '../../helpers/test-app.js';
import { installFixture } from '../fixture.js';

let f: ReturnType<typeof installFixture>;

const h = useTestApp({
  setup: async () => {
    f = installFixture(h, s);
  },
});
const s = h.seeded;

const errorsOf = (res: { json(): unknown }) => (res.json() as { errors: { code: number; path?: string[]; message: string }[] }).errors;

describe('packages', () => {
  test('POST /v1/packages: 201 with the package; GET one and the list, newest first', async () => {
    const res = await f.call('POST', '/v1/packages', { name: 'web' });
    assert.equal(res.statusCode, 201);
    const pkg = res.json();
    assert.deepEqual(Object.keys(pkg).sort(), ['created_at', 'etag', 'id', 'name', 'workspace_id']);
    assert.match(pkg.id, /^pkg_[0-9a-z]{26}$/);
    assert.equal(pkg.workspace_id, s.workspaceId);
    assert.deepEqual(await f.ok('GET', `/v1/packages/${pkg.id}`), pkg);
    assert.deepEqual(await f.ok('GET', `/v1/packages/${pkg.id.slice(4)}`), pkg, 'the bare id works too');
    const newer = await f.createPackage();
    const page = await f.ok('GET', '/v1/packages?limit=1');
    assert.deepEqual([page.data[0].id, page.has_more], [newer.id, true]);
    const next = await f.ok('GET', `/v1/packages?limit=1&cursor=${page.next_cursor}`);
    assert.equal(next.data[0].id, pkg.id);
  });

  test('a package name is unique in its workspace (409 7300), not across workspaces', async () => {
    await f.createPackage('unique-name');
    const dup = await f.call('POST', '/v1/packages', { name: 'unique-name' });
    assert.equal(dup.statusCode, 409);
    assert.deepEqual([firstError(dup.json()).code, firstError(dup.json()).path], [7300, ['body', 'name']]);
    const t = await h.seed('Other');
    const res = await h.app.inject({ method: 'POST', url: '/v1/packages', headers: as(t.apiToken), payload: { name: 'unique-name' } });
    assert.equal(res.statusCode, 201);
  });

  test('bad names and bodies are 422 at their field', async () => {
    for (const [body, path] of [
      [{}, ['body', 'name']],
      [{ name: '' }, ['body', 'name']],
      [{ name: 'x'.repeat(101) }, ['body', 'name']],
      [{ name: 'two\nlines' }, ['body', 'name']],
      [{ name: 'ok', extra: true }, ['body', 'extra']],
    ] as const) {
      const res = await f.call('POST', '/v1/packages', body);
      assert.equal(res.statusCode, 422, JSON.stringify(body));
      assert.deepEqual(firstError(res.json()).path, path);
    }
  });

  test("another workspace's package is 404 (7002)", async () => {
    const t = await h.seed('Elsewhere');
    const theirs = (await h.app.inject({ method: 'POST', url: '/v1/packages', headers: as(t.apiToken), payload: { name: 'theirs' } })).json();
    const res = await f.call('GET', `/v1/packages/${theirs.id}`);
    assert.equal(res.statusCode, 404);
    assert.equal(firstError(res.json()).code, 7002);
    const v = await f.call('POST', `/v1/packages/${theirs.id}/versions`, { semver: '1.0.0', files: { a: 'x' } });
    assert.equal(v.statusCode, 404);
  });
});

describe('package versions', () => {
  test('201 with the version; paths are normalized and sorted; GET returns the files, the list does not', async () => {
    const pkg = await f.createPackage();
    const res = await f.call('POST', `/v1/packages/${pkg.id}/versions`, {
      semver: '1.2.3-rc.1+build.5',
      files: { 'z.txt': 'z', './a//b/./c.yaml': 'c: {{c}}', 'dir/': 'trailing slash is a file named dir' },
    });
    assert.equal(res.statusCode, 201, res.body);
    const v = res.json();
    assert.deepEqual(Object.keys(v).sort(), ['created_at', 'files', 'id', 'package_id', 'semver', 'workspace_id']);
    assert.match(v.id, /^pkgv_[0-9a-z]{26}$/);
    assert.equal(v.semver, '1.2.3-rc.1+build.5');
    assert.deepEqual(Object.entries(v.files), [
      ['a/b/c.yaml', 'c: {{c}}'],
      ['dir', 'trailing slash is a file named dir'],
      ['z.txt', 'z'],
    ]);
    assert.deepEqual(await f.ok('GET', `/v1/packages/${pkg.id}/versions/${v.id}`), v);
    const list = await f.ok('GET', `/v1/packages/${pkg.id}/versions`);
    assert.deepEqual(list.data, [{ id: v.id, package_id: pkg.id, workspace_id: s.workspaceId, semver: v.semver, created_at: v.created_at }]);
    const other = await f.createPackage();
    const wrongPkg = await f.call('GET', `/v1/packages/${other.id}/versions/${v.id}`);
    assert.equal(wrongPkg.statusCode, 404, 'a version is found under its own package only');
  });

  test('semver must be SemVer 2.0.0 (422 at body.semver); a semver the package has is 409 (7301)', async () => {
    const pkg = await f.createPackage();
    for (const semver of ['1', '1.0', 'v1.0.0', '01.0.0', '1.0.0-', '1.0.0+', '1.0.0-01', ' 1.0.0', '1.0.0\n', '']) {
      const res = await f.call('POST', `/v1/packages/${pkg.id}/versions`, { semver, files: { a: 'x' } });
      assert.equal(res.statusCode, 422, JSON.stringify(semver));
      assert.deepEqual(firstError(res.json()).path, ['body', 'semver']);
    }
    await f.publish(pkg.id, '1.0.0', { a: 'x' });
    const dup = await f.call('POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { a: 'other' } });
    assert.equal(dup.statusCode, 409);
    assert.deepEqual([firstError(dup.json()).code, firstError(dup.json()).path], [7301, ['body', 'semver']]);
  });

  test('bad paths are 422 (7307) at ["body","files",<path as sent>], one entry each', async () => {
    const pkg = await f.createPackage();
    const bad = [
      '../escape',
      'a/../../b',
      '/etc/passwd',
      '.git/config',
      'x/.GIT/hooks/pre-commit',
      '.git',
      '.git. ',
      'git~1/x',
      '.gitmodules',
      'nul\u0000byte',
      'back\\slash',
      'tab\there',
      '',
      '.',
      './',
      'a/'.repeat(600),
    ];
    const files = Object.fromEntries([...bad.map((p) => [p, 'x']), ['fine.txt', 'ok']]);
    const res = await f.call('POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files });
    assert.equal(res.statusCode, 422);
    const errors = errorsOf(res);
    assert.deepEqual(errors.map((e) => e.path).sort(), bad.map((p) => ['body', 'files', p]).sort());
    for (const e of errors) assert.equal(e.code, 7307);
    assert.match(errors.find((e) => e.path?.[2] === '../escape')!.message, /"\.\."/);
  });

  test('two keys naming one file, or a file that is also a directory, are 422', async () => {
    const pkg = await f.createPackage();
    const same = await f.call('POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { 'a/b': 'x', 'a//b': 'y' } });
    assert.equal(same.statusCode, 422);
    assert.deepEqual(firstError(same.json()).path, ['body', 'files', 'a//b']);
    const nested = await f.call('POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { a: 'x', 'a/b': 'y' } });
    assert.equal(nested.statusCode, 422);
    assert.deepEqual(firstError(nested.json()).path, ['body', 'files', 'a/b']);
  });

  test('a template Mustache cannot parse, or one with a partial, is 422 (7306) at its path', async () => {
    const pkg = await f.createPackage();
    for (const template of ['{{#open}}never closed', '{{unclosed', '{{/close}}', '{{#a}}{{/b}}', '{{> partial}}', '{{=<% %>=}}<%> inner%>', `${'{{#a}}'.repeat(65)}${'{{/a}}'.repeat(65)}`]) {
      const res = await f.call('POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { 'ok.txt': 'fine {{x}}', 'bad.txt': template } });
      assert.equal(res.statusCode, 422, template);
      const e = firstError(res.json());
      assert.deepEqual([e.code, e.path], [7306, ['body', 'files', 'bad.txt']], template);
    }
    const fine = await f.call('POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files: { 'a.txt': '{{=<% %>=}}<% x %> {{! comment }}{{^y}}none{{/y}}' } });
    assert.equal(fine.statusCode, 201, fine.body);
  });

  test('files must be a non-empty object of strings', async () => {
    const pkg = await f.createPackage();
    for (const files of [{}, [], 'x', { a: 1 }, { a: null }]) {
      const res = await f.call('POST', `/v1/packages/${pkg.id}/versions`, { semver: '1.0.0', files });
      assert.equal(res.statusCode, 422, JSON.stringify(files));
      assert.equal(firstError(res.json()).path?.[1], 'files');
    }
  });

  test('validation comes before existence: bad files for an unknown package are 422', async () => {
    const res = await f.call('POST', '/v1/packages/pkg_00000000000000000000000000/versions', { semver: '1.0.0', files: { '../x': 'y' } });
    assert.equal(res.statusCode, 422);
    const unknown = await f.call('POST', '/v1/packages/pkg_00000000000000000000000000/versions', { semver: '1.0.0', files: { x: 'y' } });
    assert.equal(unknown.statusCode, 404);
  });
});
