import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { clientCommands } from '../../src/cli/client/index.js';
import { runProgram } from '../../src/cli/client/program.js';
import type { Command, CommandContext } from '../../src/cli/client/command.js';
import type { Io } from '../../src/cli/client/output.js';
import { EXIT } from '../../src/cli/client/exit-codes.js';

/**
 * Issue 50, item 2: `wsp secrets access sec_X --version secv_Y` printed `wsp 1.0.0` and exited 0,
 * so `DB=$(wsp secrets access ...)` stored the wrong thing. No command's flag may be shadowed by
 * a global one; `--version` counts only before the command. Every command of the real table is
 * walked with each of its own flags, and with the global flags after it, against a stand-in that
 * records what the command would have been given.
 */
function io(): Io & { said: () => string } {
  const out = new PassThrough();
  const err = new PassThrough();
  let text = '';
  out.on('data', (d) => (text += d));
  err.on('data', (d) => (text += d));
  return { out, err, stdin: new PassThrough(), env: {}, sleep: async () => undefined, said: () => text };
}

/** The real commands with their real flags, each recording its context instead of running. */
function recording(): { commands: Command[]; seen: Map<string, CommandContext> } {
  const seen = new Map<string, CommandContext>();
  const commands = clientCommands().map((c) => ({ ...c, run: async (ctx: CommandContext) => void seen.set(c.name, ctx) }));
  return { commands, seen };
}

test('every flag of every command reaches the command, whatever global flag has its name', async () => {
  let checked = 0;
  for (const c of clientCommands()) {
    const words = c.name.split(' ');
    for (const flag of [...(c.flags ?? []), ...(c.lists ?? [])]) {
      const { commands, seen } = recording();
      const run = io();
      const code = await runProgram(commands, [...words, `--${flag}`, 'given-value'], run);
      assert.equal(code, EXIT.OK, `wsp ${c.name} --${flag} given-value: ${run.said()}`);
      const got = seen.get(c.name)!.args;
      const value = (c.lists ?? []).includes(flag) ? got.lists?.[flag] : got.flags[flag];
      assert.deepEqual(value, (c.lists ?? []).includes(flag) ? ['given-value'] : 'given-value', `wsp ${c.name} --${flag}`);
      checked++;
    }
    for (const flag of c.booleans ?? []) {
      const { commands, seen } = recording();
      const code = await runProgram(commands, [...words, `--${flag}`], io());
      assert.equal(code, EXIT.OK, `wsp ${c.name} --${flag}`);
      assert.equal(seen.get(c.name)!.args.flags[flag], true, `wsp ${c.name} --${flag}`);
      checked++;
    }
  }
  assert.ok(checked > 100, `only ${checked} flags walked`);
});

test("--json and --yes work after every command as before it; --version after a command is never the program's", async () => {
  for (const c of clientCommands()) {
    const words = c.name.split(' ');
    for (const argv of [
      [...words, '--json', '--yes'],
      ['--json', '--yes', ...words],
      [...words, '-y', '--json'],
    ]) {
      const { commands, seen } = recording();
      assert.equal(await runProgram(commands, argv, io()), EXIT.OK, argv.join(' '));
      const ctx = seen.get(c.name)!;
      assert.deepEqual([ctx.json, ctx.yes], [true, true], argv.join(' '));
    }
    const { commands, seen } = recording();
    const run = io();
    const code = await runProgram(commands, [...words, '--version', 'secv_01jd0000000000000000000000'], run);
    assert.doesNotMatch(run.said(), /^wsp \d+\.\d+\.\d+/, `wsp ${c.name} --version printed the program's version`);
    if ((c.flags ?? []).includes('version')) {
      assert.equal(code, EXIT.OK);
      assert.equal(seen.get(c.name)!.args.flags.version, 'secv_01jd0000000000000000000000');
    } else {
      assert.equal(code, EXIT.USAGE, `wsp ${c.name} --version: ${run.said()}`);
      assert.match(run.said(), /unknown flag --version/);
      assert.equal(seen.has(c.name), false, 'the command did not run');
    }
  }
});

test('before the command, --version and -V print the version and nothing runs', async () => {
  for (const argv of [['--version'], ['-V'], ['--version', 'secrets', 'list']]) {
    const { commands, seen } = recording();
    const run = io();
    assert.equal(await runProgram(commands, argv, run), EXIT.OK);
    assert.match(run.said(), /^wsp \d+\.\d+\.\d+\n$/);
    assert.equal(seen.size, 0);
  }
});
