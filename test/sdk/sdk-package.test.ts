import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The SDK builds and passes its own tests from its own folder, as its package's `npm test`. */
test('packages/sdk: `npm test` there builds it and its tests pass', async () => {
  const { stdout } = await run('npm', ['test'], { cwd: 'packages/sdk', timeout: 180_000 }).catch((err: { stdout: string; stderr: string }) => {
    assert.fail(`npm test in packages/sdk failed:\n${err.stdout}\n${err.stderr}`);
  });
  assert.match(stdout, /^# pass [1-9]\d*$/m);
  assert.match(stdout, /^# fail 0$/m);
});

/**
 * Publishable: `npm pack` (after the build above, in the same file so that nothing rebuilds
 * dist/ while it is packed) gives a tarball that says Apache-2.0, carries the LICENSE, its
 * README, its types and its code and nothing else, and whose README examples compile under
 * `tsc --strict` against the package as unpacked from the tarball, not the workspace's folder.
 */
test('packages/sdk: `npm pack` gives a tarball with the licence, the types, and a README whose examples compile from it', async () => {
  fs.mkdirSync('.wsp-test', { recursive: true });
  const dir = fs.mkdtempSync(path.resolve('.wsp-test/sdk-pack-'));
  try {
    const packed = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: 'packages/sdk', timeout: 60_000 });
    const [info] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
    const files = info!.files.map((f) => f.path).sort();
    for (const needed of ['LICENSE', 'README.md', 'package.json', 'openapi.json', 'dist/src/index.js', 'dist/src/index.d.ts', 'dist/src/schema.d.ts']) {
      assert.ok(files.includes(needed), `the tarball holds ${needed}: ${files.join(' ')}`);
    }
    assert.deepEqual(
      files.filter((f) => !/^(LICENSE|README\.md|package\.json|openapi\.json|dist\/src\/[\w.-]+\.(js|d\.ts|js\.map))$/.test(f)),
      [],
      'nothing else: no tests, no TypeScript sources',
    );

    // Unpacked where an install puts it; its dependency (openapi-fetch) and @types/node resolve
    // from the repository's node_modules further up, as they would from the user's.
    const installed = path.join(dir, 'node_modules/@workspace-platform/sdk');
    fs.mkdirSync(installed, { recursive: true });
    await run('tar', ['-xzf', path.join(dir, info!.filename), '-C', installed, '--strip-components=1']);
    const manifest = JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8')) as { license: string; private?: boolean; types: string; publishConfig?: { access?: string } };
    assert.equal(manifest.license, 'Apache-2.0');
    assert.equal(manifest.private, undefined, 'not private: publishable');
    assert.equal(manifest.publishConfig?.access, 'public', 'a scoped package is published public');
    assert.equal(fs.readFileSync(path.join(installed, 'LICENSE'), 'utf8'), fs.readFileSync('LICENSE', 'utf8'), "the SDK's LICENSE is the project's (Apache-2.0)");
    assert.ok(fs.existsSync(path.join(installed, manifest.types)), 'its types are in the tarball');

    const examples = [...fs.readFileSync(path.join(installed, 'README.md'), 'utf8').matchAll(/^### (.+)\n[\s\S]*?```ts\n([\s\S]*?)```/gm)].map((m) => m[2]!);
    assert.ok(examples.length >= 4, `the packed README has its examples (${examples.length})`);
    examples.forEach((code, i) => fs.writeFileSync(path.join(dir, `example-${i}.ts`), code));
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
    fs.writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noUncheckedIndexedAccess: true, types: ['node'], noEmit: true, skipLibCheck: false },
        include: ['*.ts'],
      }),
    );
    const tsc = await run(process.execPath, [path.resolve('node_modules/typescript/bin/tsc'), '-p', dir, '--listFiles'], { maxBuffer: 64 * 1024 * 1024 }).catch((err: { stdout: string }) => ({
      stdout: err.stdout,
      failed: true,
    }));
    assert.ok(
      !('failed' in tsc),
      `the packed README's examples do not compile against the tarball:\n${tsc.stdout
        .split('\n')
        .filter((l) => !l.startsWith('/'))
        .join('\n')}`,
    );
    assert.ok(tsc.stdout.split('\n').includes(path.join(installed, 'dist/src/index.d.ts')), 'compiled against the unpacked tarball');

    // And it loads as a module from there.
    const loaded = await run(process.execPath, ['--input-type=module', '-e', "const m = await import('@workspace-platform/sdk'); console.log(typeof m.createClient)"], { cwd: dir });
    assert.equal(loaded.stdout.trim(), 'function');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
