import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { makeDirectory } from '../shared/directories.js';

/**
 * The volume holding the installs' repositories (WSP_REPO_DIR), as an operator sees it: present,
 * writable, with room. What is wrong with it is told in words (an operation's error, /readyz),
 * because the error a write met (EROFS, ENOSPC, or git's exit status for the same) names neither
 * the cause nor the fix.
 */
export type VolumeProblem = 'missing' | 'read-only' | 'full' | 'not-writable';

/**
 * A file the server puts in the repository directory when it first uses it. A directory without
 * it is an empty mount point (the volume is not mounted, or was unmounted): writing repositories
 * there would put them on the wrong disk, where they vanish when the volume comes back.
 */
export const VOLUME_MARKER = '.wsp-repositories';

const WORDS: Record<VolumeProblem, string> = {
  missing: `The repository volume is missing: the repository directory (WSP_REPO_DIR) is absent or does not hold its marker file ${VOLUME_MARKER}; is the volume mounted?`,
  'read-only': 'The repository volume is read-only',
  full: 'The repository volume is full',
  'not-writable': 'The repository volume cannot be written (permission denied)',
};

/** A write of a repository refused because of its volume, not of the repository. */
export class RepositoryVolumeError extends Error {
  constructor(
    readonly problem: VolumeProblem,
    message: string = WORDS[problem],
  ) {
    super(message);
  }
}

/** What a failed file operation says about its volume, when its errno says it. */
export function problemOfErrno(err: unknown): VolumeProblem | null {
  switch ((err as NodeJS.ErrnoException | null)?.code) {
    case 'EROFS':
      return 'read-only';
    case 'ENOSPC':
    case 'EDQUOT':
      return 'full';
    case 'EACCES':
    case 'EPERM':
      return 'not-writable';
    default:
      return null;
  }
}

/**
 * Makes the directory and its marker when neither is there (a new installation, or one from
 * before the marker: its repositories are there, so it is the volume). Nothing is thrown: a
 * volume that cannot be written now is what /readyz and the jobs report.
 */
export function markVolume(root: string): void {
  try {
    makeDirectory(root, 0o700);
    fs.closeSync(fs.openSync(path.join(root, VOLUME_MARKER), 'a', 0o600));
  } catch {
    // reported by probeVolume
  }
}

/** One page or block: a smaller write can fit in the last block of a disk that is otherwise full. */
const PROBE_BYTES = Buffer.alloc(4096);

/**
 * What is wrong with the volume now (null: nothing): the marker must be there, and a small file
 * must be made, written and removed. Only writing shows a read-only mount or a full disk (to
 * root, permissions never do).
 */
export function probeVolume(root: string): RepositoryVolumeError | null {
  try {
    fs.statSync(path.join(root, VOLUME_MARKER));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return new RepositoryVolumeError('missing');
    return new RepositoryVolumeError('not-writable', `The repository volume cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const probe = path.join(root, `.probe-${process.pid}-${randomBytes(4).toString('hex')}`);
  let fd: number | undefined;
  try {
    fd = fs.openSync(probe, 'wx', 0o600);
    fs.writeSync(fd, PROBE_BYTES);
    return null;
  } catch (err) {
    const problem = problemOfErrno(err);
    return problem ? new RepositoryVolumeError(problem) : new RepositoryVolumeError('not-writable', `The repository volume cannot be written (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
    fs.rmSync(probe, { force: true });
  }
}
