import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeFilePath } from '../../../src/installs/packages/file-paths.js';
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
    for (const raw of ['', '/a', '..', 'a/../b', '.git', '.GIT/x', 'a/.git', '.git./x', '.git /x', '.g\u200cit/x', 'git~1', '.gitmodules', 'x/.GitModules', 'gitmod~1', '.git::$INDEX_ALLOCATION/x', 'a\u0000b', 'a\nb', 'a\\b', '\ud800x', 'x'.repeat(1025), `${'y'.repeat(256)}/z`, '.', './/.']) {
      assert.equal(normalizeFilePath(raw).ok, false, JSON.stringify(raw));
    }
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
