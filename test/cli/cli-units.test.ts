import { test } from 'node:test';
import assert from 'node:assert/strict';
import { durationFlag, formatDuration, timeOption } from '../../src/cli/client/durations.js';
import { fitWidths, relativeTime, withIsoTimes } from '../../src/cli/client/output.js';
import { rephrase } from '../../src/cli/client/program.js';
import { UsageError } from '../../src/cli/args.js';

/** The CLI's small rules, each on its own: durations, times, table widths, commander's messages. */
test('durations need a unit: seconds to weeks, combined; a bare number or a bound crossed is a usage error', () => {
  assert.equal(durationFlag('t', '90s'), 90);
  assert.equal(durationFlag('t', '10m'), 600);
  assert.equal(durationFlag('t', '12h'), 43_200);
  assert.equal(durationFlag('t', '30d'), 2_592_000);
  assert.equal(durationFlag('t', '2w'), 1_209_600);
  assert.equal(durationFlag('t', '1h30m'), 5400);
  assert.equal(durationFlag('t', '1H'), 3600, 'units in any case');
  assert.throws(
    () => durationFlag('expires-in', '30'),
    (e: unknown) => e instanceof UsageError && e.message === '--expires-in needs a unit: 30s, 30m, 30h or 30d',
  );
  assert.throws(() => durationFlag('t', '3 days'), /must be a duration such as 90s/);
  assert.throws(() => durationFlag('t', '30s', { min: 60 }), /at least 1m/);
  assert.throws(() => durationFlag('t', '2d', { max: 86400 }), /at most 1d/);
  assert.equal(formatDuration(5400), '1h30m');
  assert.equal(formatDuration(0), '0s');
});

test('a time flag: Unix seconds, ISO 8601 dates and times, or a duration ago', () => {
  const now = 1_800_000_000;
  assert.equal(timeOption({ from: '1767225600' }, 'from', now), 1_767_225_600);
  assert.equal(timeOption({ from: '2026-01-01' }, 'from', now), 1_767_225_600);
  assert.equal(timeOption({ from: '2026-01-01T01:00:00Z' }, 'from', now), 1_767_229_200);
  assert.equal(timeOption({ from: '7d' }, 'from', now), now - 7 * 86400);
  assert.equal(timeOption({}, 'from', now), undefined);
  assert.throws(() => timeOption({ from: 'yesterday' }, 'from', now), /--from must be Unix seconds, an ISO 8601 date/);
});

test('times: relative on a terminal, ISO 8601 under --json (keys ending in _at only)', () => {
  const now = 1_800_000_000_000;
  assert.equal(relativeTime(now / 1000 - 2, now), 'just now');
  assert.equal(relativeTime(now / 1000 - 300, now), '5 min ago');
  assert.equal(relativeTime(now / 1000 + 3 * 86400, now), 'in 3 d');
  assert.equal(relativeTime(now / 1000 - 7200, now), '2 h ago');
  assert.deepEqual(withIsoTimes({ created_at: 0, expires_at: null, count: 5, points: [[1, 2]], nested: [{ updated_at: 60 }] }), {
    created_at: '1970-01-01T00:00:00Z',
    expires_at: null,
    count: 5,
    points: [[1, 2]],
    nested: [{ updated_at: '1970-01-01T00:01:00Z' }],
  });
});

test('tables fit the terminal: the widest column gives way first, none below eight characters', () => {
  assert.deepEqual(fitWidths([10, 40, 20], undefined), [10, 40, 20], 'not a terminal: as wide as the cells');
  assert.deepEqual(fitWidths([10, 40, 20], 80), [10, 40, 20], 'fits already');
  assert.deepEqual(fitWidths([10, 40, 20], 60), [10, 26, 20]);
  assert.deepEqual(fitWidths([10, 40, 20], 20), [8, 8, 8], 'a window too narrow keeps eight each');
});

test("commander's errors in this CLI's words, with the command they belong to", () => {
  assert.equal(rephrase("error: unknown option '--lmit'\n(Did you mean --limit?)\n"), 'error: unknown flag --lmit; did you mean --limit?\n');
  assert.equal(rephrase("error: option '--name <NAME>' argument missing\n"), 'error: --name needs a value\n');
  assert.equal(rephrase("error: option '-f, --raw-field <key=value>' argument missing\n"), 'error: --raw-field needs a value\n');
  assert.equal(rephrase("error: unknown command 'tokns'\n(Did you mean tokens?)\n"), 'error: unknown command "tokns"; did you mean "wsp tokens"?\n');
  assert.equal(rephrase("error: unknown command 'lsit'\n(Did you mean list?)\n", 'wsp secrets'), 'error: unknown command "wsp secrets lsit"; did you mean "wsp secrets list"?\n');
});
