import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CliError, EXIT } from './exit-codes.js';
import { makeDirectory } from '../../shared/directories.js';

/** What `wsp login` keeps: one server, one session, the workspace commands act in. */
export interface Credentials {
  server: string;
  token: string;
  user_id: string;
  /** Sent as Service-Context; set by `wsp workspace use`. */
  workspace: string | null;
}

export const DEFAULT_SERVER = 'http://localhost:8080';

/** `$WSP_CONFIG_DIR`, else `~/.config/wsp` (XDG_CONFIG_HOME honoured). */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.WSP_CONFIG_DIR) return path.resolve(env.WSP_CONFIG_DIR);
  return path.join(env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config'), 'wsp');
}

export const credentialsPath = (env?: NodeJS.ProcessEnv) => path.join(configDir(env), 'credentials.json');

export function readCredentials(env?: NodeJS.ProcessEnv): Credentials | null {
  const file = credentialsPath(env);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new CliError(`cannot read ${file}: ${(err as Error).message}`, EXIT.FAILED);
  }
  try {
    const c = JSON.parse(text) as Partial<Credentials>;
    if (typeof c.server === 'string' && typeof c.token === 'string' && typeof c.user_id === 'string') {
      return { server: c.server, token: c.token, user_id: c.user_id, workspace: typeof c.workspace === 'string' ? c.workspace : null };
    }
  } catch {
    // fall through: a damaged file is as good as none
  }
  throw new CliError(`${file} is damaged; run \`wsp login\` again`, EXIT.NOT_LOGGED_IN);
}

/** The credential file is a secret: 0600 in a 0700 directory, replaced atomically. */
export function writeCredentials(c: Credentials, env?: NodeJS.ProcessEnv): string {
  const file = credentialsPath(env);
  const dir = path.dirname(file);
  makeDirectory(dir, 0o700);
  // mkdir's mode is masked by the umask and ignored for a directory that already exists.
  fs.chmodSync(dir, 0o700);
  const tmp = `${file}.${process.pid}.tmp`;
  writePrivateFile(tmp, `${JSON.stringify(c, null, 2)}\n`);
  fs.renameSync(tmp, file);
  return file;
}

/**
 * Writes a file only its owner can read (0600), also when it already exists: the mode given to
 * writeFileSync is masked by the umask and ignored for an existing file, so it is set before
 * anything secret is written.
 */
export function writePrivateFile(file: string, data: string | Uint8Array): void {
  const fd = fs.openSync(file, 'w', 0o600);
  try {
    fs.fchmodSync(fd, 0o600);
    fs.writeFileSync(fd, data);
  } finally {
    fs.closeSync(fd);
  }
}

export function deleteCredentials(env?: NodeJS.ProcessEnv): boolean {
  try {
    fs.unlinkSync(credentialsPath(env));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/**
 * The credential a command uses: `WSP_TOKEN` when set (it wins over the stored login, as
 * `GH_TOKEN` does: CI jobs and scripts), else the login; `WSP_SERVER` and `WSP_WORKSPACE` name
 * the server and workspace over the stored ones.
 */
export function requireCredentials(env: NodeJS.ProcessEnv = process.env): Credentials {
  const token = env.WSP_TOKEN?.trim();
  const stored = token && env.WSP_SERVER ? null : readCredentials(env);
  if (token) {
    const server = env.WSP_SERVER ?? stored?.server ?? DEFAULT_SERVER;
    return { server, token, user_id: '', workspace: env.WSP_WORKSPACE ?? (stored?.server === server && !isApiToken(token) ? stored.workspace : null) };
  }
  if (!stored) throw new CliError('not logged in: run `wsp login` first, or set WSP_TOKEN', EXIT.NOT_LOGGED_IN);
  return { ...stored, ...(env.WSP_SERVER ? { server: env.WSP_SERVER } : {}), ...(env.WSP_WORKSPACE ? { workspace: env.WSP_WORKSPACE } : {}) };
}

/** A workspace API token acts in its own workspace: it names none. */
const isApiToken = (token: string) => token.startsWith('sk_svc_');

/** Workspace commands need a workspace: say how to choose one instead of relaying a 403. */
export function requireWorkspace(c: Credentials): Credentials & { workspace: string } {
  if (!c.workspace && !isApiToken(c.token)) throw new CliError('no workspace chosen: run `wsp workspace use ws_...` (see `wsp workspace list`)', EXIT.USAGE);
  return c as Credentials & { workspace: string };
}
