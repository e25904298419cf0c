import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_PATH_DEPTH, normalizeFilePath } from '../../../src/installs/packages/file-paths.js';
import { checkVersionFiles } from '../../../src/installs/packages/version-files.js';
import { ApiError } from '../../../src/shared/errors.js';
import { compareSemver, isPrerelease } from '../../../src/installs/packages/semver.js';
import { renderHash } from '../../../src/installs/renders/render-hash.js';
import { createHash } from 'node:crypto';

describe('file paths', () => {
  test('normalized: empty and "." segments go; the rest is kept as sent', () => {
    for (const [raw, norm] of [
      ['a.txt', 'a.txt'],
      ['./a//b/./c', 'a/b/c'],
      ['dir/', 'dir'],
      ['.github/workflows/ci.yml', '.github/workflows/ci.yml'],
      ['.gitignore', '.gitignore'],
      ['Ünïcödé/файл.txt', 'Ünïcödé/файл.txt'],
      ['a..b/..c', 'a..b/..c'],
    ]) {
      assert.deepEqual(normalizeFilePath(raw!), { ok: true, path: norm }, raw);
    }
  });

  test('refused: absolute, "..", names git reserves, control characters, backslashes, lone surrogates, too long', () => {
    for (const raw of [
      '',
      '/a',
      '..',
      'a/../b',
      '.git',
      '.GIT/x',
      'a/.git',
      '.git./x',
      '.git /x',
      '.g\u200cit/x',
      'git~1',
      '.gitmodules',
      'x/.GitModules',
      'gitmod~1',
      '.git::$INDEX_ALLOCATION/x',
      'a\u0000b',
      'a\nb',
      'a\\b',
      '\ud800x',
      'x'.repeat(1025),
      `${'y'.repeat(256)}/z`,
      '.',
      './/.',
    ]) {
      assert.equal(normalizeFilePath(raw).ok, false, JSON.stringify(raw));
    }
  });
});

describe("a version's files as a tree", () => {
  test(`at most ${MAX_PATH_DEPTH} directories deep`, () => {
    assert.equal(normalizeFilePath('a/'.repeat(MAX_PATH_DEPTH - 1) + 'f').ok, true);
    assert.deepEqual(normalizeFilePath('a/'.repeat(MAX_PATH_DEPTH) + 'f'), { ok: false, reason: `the path is more than ${MAX_PATH_DEPTH} directories deep` });
  });

  test('a file cannot have files under it: every such path is reported, naming the file it is inside', () => {
    const files = { a: '1', 'a/b/c.txt': '2', 'a/b/c.txt/d': '3', 'ab/c': '4', 'x/y': '5' };
    assert.throws(
      () => checkVersionFiles(files),
      (err: unknown) => {
        assert.ok(err instanceof ApiError);
        const entries = err.entries as Array<{ message: string; path: string[] }>;
        assert.deepEqual(entries.map((e) => [e.path[2], e.message]).sort(), [
          ['a/b/c.txt', '"a/b/c.txt" is inside "a", which is a file'],
          ['a/b/c.txt/d', '"a/b/c.txt/d" is inside "a", which is a file'],
          ['a/b/c.txt/d', '"a/b/c.txt/d" is inside "a/b/c.txt", which is a file'],
        ]);
        return true;
      },
    );
    assert.deepEqual(Object.keys(checkVersionFiles({ 'ab/c': '4', 'a/b': '1', 'x/y': '5' })), ['a/b', 'ab/c', 'x/y']);
  });
});

describe('semver precedence (SemVer 2.0.0 §11)', () => {
  test('orders as the specification lists', () => {
    const ordered = ['1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-alpha.beta', '1.0.0-beta', '1.0.0-beta.2', '1.0.0-beta.11', '1.0.0-rc.1', '1.0.0', '1.0.1', '1.1.0', '2.0.0', '10.0.0'];
    for (let i = 0; i + 1 < ordered.length; i++) {
      assert.equal(compareSemver(ordered[i]!, ordered[i + 1]!), -1, `${ordered[i]} < ${ordered[i + 1]}`);
      assert.equal(compareSemver(ordered[i + 1]!, ordered[i]!), 1);
    }
    assert.equal(compareSemver('1.0.0+a', '1.0.0+b'), 0, 'build metadata does not count');
    assert.equal(compareSemver('99999999999999999999.0.0', '99999999999999999998.0.0'), 1, 'beyond Number precision');
    assert.deepEqual([isPrerelease('1.0.0-rc.1'), isPrerelease('1.0.0+build')], [true, false]);
  });
});

describe('render_hash', () => {
  test('SHA-256 over "<path>\\0<sha256 hex of content>\\n" in UTF-8 byte order of paths', () => {
    const h = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');
    const files = [
      { path: 'b.txt', content: Buffer.from('B') },
      { path: 'a/z.txt', content: Buffer.from('Z') },
      { path: 'é', content: Buffer.alloc(0) },
      { path: 'Z', content: Buffer.from('upper') },
    ];
    const expected = h(`Z\0${h('upper')}\na/z.txt\0${h('Z')}\nb.txt\0${h('B')}\né\0${h('')}\n`);
    assert.equal(renderHash(files), expected);
    assert.equal(renderHash([...files].reverse()), expected, 'order of input does not matter');
    assert.notEqual(renderHash([{ path: 'b.txt', content: Buffer.from('b') }]), renderHash([{ path: 'b.txt', content: Buffer.from('B') }]));
  });
});
