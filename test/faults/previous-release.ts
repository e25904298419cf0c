import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { REPO_ROOT } from '../../scripts/repo-root.js';

/**
 * "The previous release" of issue 22's upgrade test: the repository has no tags, so it is the
 * last commit of main before migration 0018 (list_versions), the newest migration when the
 * issue was written (`git log --oneline -- src/db/migrations`).
 */
export const PREVIOUS_RELEASE = {
  commit: 'b23dc8887e10e31031284879088027deacf1873e',
  /** Its newest migration: what a database it made has applied. */
  lastMigration: '0017_webhooks',
};

/** The previous release's sources, `git archive` of its commit (src bin scripts package.json LICENSE), gzipped. */
export const PREVIOUS_RELEASE_SOURCES = path.join(REPO_ROOT, 'test/fixtures/upgrade/previous-release.tar.gz');

/**
 * The previous release's `wsp` (its bin/wsp.js), built once into a cache directory outside the
 * repository (keyed by the commit) so repeated runs cost nothing. `git archive` rather than a
 * worktree: nothing is registered in the repository, so a killed build leaves no stale
 * worktree behind. esbuild bundles its TypeScript sources straight into dist/wsp.mjs, the file
 * its bin/wsp.js runs (what its own `npm run build` makes with tsc and then esbuild, in ~6 s
 * instead of ~100 s; the console's static files are not built: the upgrade does not use them).
 * node_modules is a link to the current one: package.json's dependencies did not change between
 * that commit and this one (only its scripts), so the old code runs on what it was built for.
 */
export async function previousReleaseBin(commit = PREVIOUS_RELEASE.commit): Promise<string> {
  const cache = path.join(os.tmpdir(), `wsp-release-${commit.slice(0, 12)}`);
  const bin = path.join(cache, 'bin/wsp.js');
  if (fs.existsSync(path.join(cache, 'dist/wsp.mjs'))) {
    linkModules(cache);
    return bin;
  }
  // Built beside the cache and renamed into place: two engines' test files may build at once,
  // and a half-built tree must never be taken for a finished one.
  const work = fs.mkdtempSync(`${cache}.building-`);
  try {
    // The release's sources are committed with the fixture (what it needs to build and run: src,
    // bin, scripts, package.json, LICENSE): a clone without history (CI may check out one commit)
    // has no b23dc88 to archive. scripts/make-upgrade-fixture.ts writes the file from git.
    if (commit === PREVIOUS_RELEASE.commit && fs.existsSync(PREVIOUS_RELEASE_SOURCES)) {
      execFileSync('tar', ['-xzf', PREVIOUS_RELEASE_SOURCES, '-C', work]);
    } else {
      const archive = execFileSync('git', ['-C', REPO_ROOT, 'archive', '--format=tar', commit], { maxBuffer: 256 * 1024 * 1024 });
      execFileSync('tar', ['-x', '-C', work], { input: archive });
    }
    linkModules(work);
    await build({
      entryPoints: [
        { in: path.join(work, 'src/cli/main.ts'), out: 'wsp' },
        { in: path.join(work, 'src/installs/renders/render-worker.ts'), out: 'render-worker' },
      ],
      outdir: path.join(work, 'dist'),
      outExtension: { '.js': '.mjs' },
      // The same settings as that commit's scripts/bundle.mjs.
      define: { WSP_RENDER_WORKER: JSON.stringify('./render-worker.mjs') },
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      external: ['better-sqlite3', '@node-rs/argon2', '@fastify/swagger-ui', 'pg-native'],
      banner: { js: "import { createRequire as createRequireForBundle } from 'node:module'; const require = createRequireForBundle(import.meta.url);" },
      logLevel: 'warning',
    });
    try {
      fs.renameSync(work, cache);
    } catch (e) {
      // Another build finished first: its tree is as good as ours.
      if (!fs.existsSync(path.join(cache, 'dist/wsp.mjs'))) throw e;
      fs.rmSync(work, { recursive: true, force: true });
    }
  } catch (e) {
    fs.rmSync(work, { recursive: true, force: true });
    throw e;
  }
  return bin;
}

/**
 * The cache outlives the checkout that built it: its node_modules link may name another checkout's
 * folder, since removed (a worktree, a CI clone), and the release would not start. The link is
 * pointed at this checkout's node_modules whenever it names another, replaced by a rename so that
 * a test file starting the release meanwhile sees one link or the other, never none.
 */
function linkModules(dir: string): void {
  const want = fs.realpathSync(path.join(REPO_ROOT, 'node_modules'));
  const link = path.join(dir, 'node_modules');
  let have: string | null = null;
  try {
    have = fs.readlinkSync(link);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  if (have === want) return;
  const fresh = `${link}.${process.pid}.${Date.now()}`;
  fs.symlinkSync(want, fresh);
  fs.renameSync(fresh, link);
}
