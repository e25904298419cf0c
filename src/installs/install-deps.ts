import type { ServiceDeps } from '../service-deps.js';
import { repoRoot } from '../config.js';
import { GitStorage } from '../git/git-storage.js';

/** What the installs area is built from: the platform's dependencies and the installs' git repositories. */
export type InstallDeps = ServiceDeps & { repos: GitStorage };

export const installDeps = (deps: ServiceDeps): InstallDeps => ({ ...deps, repos: new GitStorage(repoRoot(deps.config)) });
