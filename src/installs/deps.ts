import type { ServiceDeps } from '../deps.js';
import { repoRoot } from '../config.js';
import { GitCliStorage } from '../git/git-cli-storage.js';

/** What the installs area is built from: the platform's dependencies and the installs' git repositories. */
export type InstallDeps = ServiceDeps & { repos: GitCliStorage };

export const installDeps = (deps: ServiceDeps): InstallDeps => ({ ...deps, repos: new GitCliStorage(repoRoot(deps.config)) });
