export interface CommitSubject {
  renderId: string;
  installId: string;
  packageName: string;
  semver: string;
  versionId: string;
  restoredFromRenderId?: string | null;
}

/** The subject line: what a render's `message` shows once it is committed. */
export function commitSubject(c: CommitSubject): string {
  const what = `${c.packageName} ${c.semver}`;
  return c.restoredFromRenderId ? `Restore ${c.restoredFromRenderId} as ${c.renderId}: ${what}` : `Render ${c.renderId}: ${what}`;
}

/**
 * Subject and git trailers: anyone reading the repository alone can tell which render,
 * install and version made each commit, and the renderer can recognize its own commit when
 * it retries after its database write was lost.
 */
export function commitMessage(c: CommitSubject): string {
  const trailers = [`Render-Id: ${c.renderId}`, `Install-Id: ${c.installId}`, `Package-Version-Id: ${c.versionId}`];
  if (c.restoredFromRenderId) trailers.push(`Restored-From-Render-Id: ${c.restoredFromRenderId}`);
  return `${commitSubject(c)}\n\n${trailers.join('\n')}\n`;
}

export function renderIdOf(message: string): string | null {
  return /^Render-Id: (\S+)$/m.exec(message)?.[1] ?? null;
}
