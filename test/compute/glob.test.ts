import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { as, firstError } from '../helpers/harness.js';
import { cpuClock } from '../helpers/timing.js';
import { compileGlob } from '../../src/compute/configs/glob.js';
import { useComputeTestApp, CONFIG_BODY, createConfig } from './setup.js';

/** machine_type_filter globs: their meaning, and a matcher whose cost no pattern can blow up. */
describe('compileGlob', () => {
  test('*, ?, [abc], [a-z], [!x] and literals, matched against the whole name', () => {
    const cases: [string, string, boolean][] = [
      ['*', 'cx22', true],
      ['*', '', true],
      ['cx*', 'cx22', true],
      ['cx*', 'cpx11', false],
      ['*22', 'cx22', true],
      ['*22', 'cx222', true],
      ['*22', 'cx23', false],
      ['c*2*', 'cx22', true],
      ['c*x*1', 'cpx11', true],
      ['c*x*1', 'cpx12', false],
      ['c?x11', 'cax11', true],
      ['c?x11', 'cx11', false],
      ['c??x11', 'ccax11', true],
      ['cpx[12]1', 'cpx21', true],
      ['cpx[12]1', 'cpx31', false],
      ['cx2[0-9]', 'cx22', true],
      ['cx2[0-9]', 'cx2a', false],
      ['c[!p]x*', 'cax11', true],
      ['c[!p]x*', 'cpx11', false],
      ['c[a-cx]x*', 'cxx1', true],
      ['[a-c-]x', '-x', true],
      ['cx.22', 'cx.22', true],
      ['cx.22', 'cxa22', false],
      ['CX22', 'cx22', false],
      ['**x**', 'x', true],
      ['*a*b*c', 'aXbXbc', true],
      ['*a*b*c', 'aXbXcb', false],
      ['a*', 'b', false],
      ['cx22', 'cx22x', false],
      ['cx22', 'cx2', false],
    ];
    for (const [glob, name, want] of cases) {
      const g = compileGlob(glob);
      assert.ok(g, glob);
      assert.equal(g.test(name), want, `${glob} ~ ${name}`);
    }
  });

  test('not a glob: null (bad shape, a reversed range, empty, over 100 characters)', () => {
    for (const bad of ['', 'cx[', 'cx]', '[]', 'c x', 'cx/*', 'cx[z-a]', '[9-0]', 'x'.repeat(101), '(a|b)', 'a+']) assert.equal(compileGlob(bad), null, bad);
    assert.ok(compileGlob('x'.repeat(100)));
  });

  test('pathological patterns finish fast: every one of them, together, well under a second of CPU', () => {
    const names = ['cx22', 'c'.repeat(64), 'a'.repeat(64), `${'ab'.repeat(31)}cx`, 'x'.repeat(63) + 'y', 'ccx22'.repeat(12) + 'cx2'];
    const globs = [
      `${'*'.repeat(99)}x`,
      `${'*'.repeat(20)}cx22`,
      `${'*a'.repeat(50)}`,
      `${'*?'.repeat(49)}x`,
      `${'*c'.repeat(33)}*z`,
      `${'*[a-c]'.repeat(16)}*q`,
      `${'*[!z]'.repeat(19)}*z`,
      `${'?'.repeat(50)}*${'*x'.repeat(24)}`,
    ];
    // CPU time, not wall time: what backtracking would blow up, and what a loaded machine does not stretch.
    const cpu = cpuClock();
    let matched = 0;
    for (let round = 0; round < 20; round++) {
      for (const glob of globs) {
        const g = compileGlob(glob);
        assert.ok(g, glob);
        for (const name of names) if (g.test(name)) matched++;
      }
    }
    const ms = cpu();
    assert.ok(ms < 1000, `took ${ms.toFixed(0)} ms of CPU`);
    // The answers are right too, not just quick.
    assert.equal(compileGlob(`${'*'.repeat(20)}cx22`)!.test('cx22'), true);
    assert.equal(compileGlob(`${'*'.repeat(99)}x`)!.test('a'.repeat(64)), false);
    assert.equal(compileGlob(`${'*'.repeat(99)}x`)!.test(`${'a'.repeat(63)}x`), true);
    assert.ok(matched > 0);
  });
});

describe('the glob on the request path', () => {
  const t = useComputeTestApp();

  test('a config whose filter is 99 stars and an x answers 422 at once; a machine of a 20-star filter checks a 64-character server_type at once', async () => {
    const cpu = cpuClock();
    const none = await t.h.app.inject({ method: 'POST', url: '/v1/compute/configs', headers: as(t.s.apiToken), payload: { ...CONFIG_BODY, machine_type_filter: `${'*'.repeat(99)}x` } });
    assert.equal(none.statusCode, 422);
    assert.deepEqual(firstError(none.json()).path, ['body', 'machine_type_filter']);
    assert.match(firstError(none.json()).message, /matches none/);

    const configId = await createConfig(t, { ...CONFIG_BODY, machine_type_filter: `${'*'.repeat(20)}cx22` });
    for (const server_type of ['c'.repeat(64), `${'cx2'.repeat(21)}c`]) {
      const res = await t.h.app.inject({ method: 'POST', url: '/v1/machines', headers: as(t.s.apiToken), payload: { compute_config_id: configId, server_type } });
      assert.equal(res.statusCode, 422, server_type);
      assert.deepEqual(firstError(res.json()).path, ['body', 'server_type']);
      assert.match(firstError(res.json()).message, /does not match/);
    }
    // The CPU of this process (the app runs in it): the regular expression these replaced took seconds per server type.
    const ms = cpu();
    assert.ok(ms < 5000, `took ${ms.toFixed(0)} ms of CPU`);
  });
});
