import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ManualClock } from '../../src/shared/clock.js';
import { REPO_ROOT } from '../../scripts/repo-root.js';
import { OffsetClock } from '../helpers/offset-clock.js';

/** The clock tests of real processes give the compute area: moved by whole seconds read from a file. */
test('the offset is read at start, followed when the file is rewritten, and kept when a later read fails; a bad file stops the start', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsp-offset-'));
  try {
    const file = path.join(dir, 'offset');
    // Production code reads no test-only clock setting: the variable that once moved it is gone.
    const readers = (fs.readdirSync(path.join(REPO_ROOT, 'src'), { recursive: true }) as string[]).filter(
      (f) => f.endsWith('.ts') && fs.readFileSync(path.join(REPO_ROOT, 'src', f), 'utf8').includes('CLOCK_OFFSET'),
    );
    assert.deepEqual(readers, [], 'no file of src/ reads a clock offset');

    const base = new ManualClock(1_000_000_000_000);
    assert.throws(() => new OffsetClock(base, file), /ENOENT/);
    for (const bad of ['', 'soon', '1.5', '12 34']) {
      fs.writeFileSync(file, bad);
      assert.throws(() => new OffsetClock(base, file), /must hold a whole number of seconds/, JSON.stringify(bad));
    }
    fs.writeFileSync(file, ' 86400\n');
    const clock = new OffsetClock(base, file);
    assert.equal(clock.nowMs(), 1_000_000_000_000 + 86_400_000);
    base.advanceSeconds(5);
    assert.equal(clock.nowMs(), 1_000_000_005_000 + 86_400_000, 'the base clock still moves');
    fs.writeFileSync(file, '-60');
    await sleep(150);
    assert.equal(clock.nowMs(), 1_000_000_005_000 - 60_000);
    fs.writeFileSync(file, 'garbage');
    await sleep(150);
    assert.equal(clock.nowMs(), 1_000_000_005_000 - 60_000, 'the last good offset holds');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
