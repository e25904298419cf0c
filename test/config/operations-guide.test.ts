import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { REPO_ROOT } from '../../scripts/repo-root.js';
import { configurationTable, BEGIN, END } from '../../scripts/config-reference.js';
import { BUNDLE_EXTERNALS } from '../../scripts/bundle-externals.mjs';
import { createTestApp } from '../helpers/harness.js';

/**
 * docs/operations.md, the operator's guide, cannot drift from what the server does: its
 * configuration table is the one the settings' schema makes, every metric its alert rules and
 * its list name is one a server exports, and the README sends the reader to it. The image's
 * node_modules keeps only the packages the bundle loads from outside itself: the bundle must not
 * load any other.
 */
const guide = fs.readFileSync(path.join(REPO_ROOT, 'docs/operations.md'), 'utf8');

test("the guide's configuration table is the one the settings' schema makes (npm run docs:config)", () => {
  const begin = guide.indexOf(BEGIN);
  const end = guide.indexOf(END);
  assert.ok(begin >= 0 && end > begin, 'the guide has the configuration block');
  assert.equal(guide.slice(begin + BEGIN.length, end).trim(), configurationTable(), 'the table differs from the schema: run `npm run docs:config`');
});

test('every metric the guide names is one a server exports on /metrics', async () => {
  const h = await createTestApp({ processMetrics: true });
  try {
    const res = await h.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(res.statusCode, 200);
    const exported = new Set<string>();
    for (const m of res.body.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
      exported.add(m[1]!);
      if (m[2] === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) exported.add(`${m[1]}${suffix}`);
    }
    const monitoring = guide.slice(guide.indexOf('## Monitoring'), guide.indexOf('\n## ', guide.indexOf('## Monitoring') + 3));
    const named = new Set([...monitoring.matchAll(/\b((?:wsp|nodejs|process)_[a-z0-9_]+)\b/g)].map((m) => m[1]!));
    assert.ok(named.size >= 8, `the guide names the metrics worth alerting on (${[...named].join(', ')})`);
    assert.deepEqual(
      [...named].filter((name) => !exported.has(name)),
      [],
      'named in the guide but not exported',
    );
    // The alert rules' routes are routes of the server.
    for (const m of monitoring.matchAll(/route!?="([^"]+)"/g)) {
      assert.ok(h.app.hasRoute({ method: m[1] === '/v1/sessions' ? 'POST' : 'GET', url: m[1]! }), `the alert rules name the route ${m[1]}`);
    }
  } finally {
    await h.close();
  }
});

test('the README has the container section and sends operators to the guide', () => {
  const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  assert.match(readme, /\(docs\/operations\.md\)/);
  const section = readme.slice(readme.indexOf('## Container'), readme.indexOf('\n## ', readme.indexOf('## Container') + 3));
  const commands = [...section.matchAll(/^(docker \S+.*?)(?:\s+#.*)?$/gm)].map((m) => m[1]!.trim());
  assert.equal(commands.length, 2, `two commands to a running platform: ${commands.join(' / ')}`);
  // The same two the guide gives, which npm run test:container runs.
  for (const command of commands) assert.ok(guide.includes(command), `the guide gives the README's command: ${command}`);
});

test('the bundle loads from node_modules only the packages it leaves outside itself (what the image keeps)', () => {
  const builtins = new Set(builtinModules);
  for (const file of ['dist/wsp.cjs', 'dist/render-thread.mjs']) {
    const code = fs.readFileSync(path.join(REPO_ROOT, file), 'utf8');
    // A require( in code, not in a string the code writes (ajv's standalone code names its runtime).
    const loaded = new Set([...code.matchAll(/(?<!['"`\w.])require\("([^"]+)"\)/g)].map((m) => m[1]!).filter((name) => !name.startsWith('node:') && !builtins.has(name.split('/')[0]!)));
    const allowed = new Set(
      BUNDLE_EXTERNALS.map((specifier) =>
        specifier
          .split('/')
          .slice(0, specifier.startsWith('@') ? 2 : 1)
          .join('/'),
      ),
    );
    assert.deepEqual(
      [...loaded].filter(
        (name) =>
          !allowed.has(
            name
              .split('/')
              .slice(0, name.startsWith('@') ? 2 : 1)
              .join('/'),
          ),
      ),
      [],
      `${file} loads packages the image does not keep`,
    );
  }
});
