import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { MASTER_KEY_TEXT, type Config } from '../config.js';
import { KEY_BYTES, keyIdOf } from './crypto.js';
import { makeDirectory } from '../shared/directories.js';

/** The master key is missing, malformed, unsafe, or not the one the database was set up with. */
export class MasterKeyError extends Error {}

export interface MasterKey {
  id: string;
  key: Buffer;
}

export const KEY_FILE = 'master.key';
/** Older keys, one per line: kept by `wsp admin rotate-master-key` so nothing becomes unreadable. */
export const PREVIOUS_KEY_FILE = 'master.key.previous';

interface LoadedKeys {
  current: Buffer;
  previous: Buffer[];
}

function decode(text: string, where: string): Buffer {
  if (!MASTER_KEY_TEXT.test(text)) throw new MasterKeyError(`${where} must hold the base64 of exactly 32 bytes`);
  return Buffer.from(text, 'base64');
}

const asMasterKey = (key: Buffer): MasterKey => ({ id: keyIdOf(key), key });

/**
 * The master keys a process knows: the current one wraps new data keys; every known one
 * unwraps. Keys from files are re-read when an unknown key id turns up, so a server keeps
 * working while `wsp admin rotate-master-key` replaces the file under it.
 */
export class Keyring {
  private byId = new Map<string, MasterKey>();
  private currentKey!: MasterKey;

  constructor(
    private readonly loadKeys: () => LoadedKeys,
    /** Where the keys come from, for messages: never the keys themselves. */
    readonly source: string,
    /** Whether reloading can find anything new (files can change; the environment cannot). */
    readonly reloadable: boolean,
  ) {
    this.apply(loadKeys());
  }

  get current(): MasterKey {
    return this.currentKey;
  }

  ids(): string[] {
    return [...this.byId.keys()];
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  /** The key with this id; re-reads a file source once when it is not known yet. */
  find(id: string): MasterKey | undefined {
    if (!this.byId.has(id)) this.reload();
    return this.byId.get(id);
  }

  /** Picks up a rotation made by another process. Keys once known are kept for the process's life. */
  reload(): boolean {
    if (!this.reloadable) return false;
    try {
      this.apply(this.loadKeys());
      return true;
    } catch {
      return false; // a half-written or removed file: keep what is known
    }
  }

  private apply(keys: LoadedKeys): void {
    this.currentKey = asMasterKey(keys.current);
    for (const k of [keys.current, ...keys.previous]) {
      const mk = asMasterKey(k);
      this.byId.set(mk.id, mk);
    }
  }
}

/**
 * WSP_MASTER_KEY, else the key file in the data directory (made on first start) and the older
 * keys of master.key.previous; WSP_MASTER_KEY_PREVIOUS adds older keys either way.
 */
export function keyringFromConfig(config: Pick<Config, 'masterKey' | 'masterKeyPrevious' | 'dataDir'>): Keyring {
  if (config.masterKey) {
    const env: LoadedKeys = {
      current: decode(config.masterKey, 'WSP_MASTER_KEY'),
      previous: config.masterKeyPrevious.map((k) => decode(k, 'WSP_MASTER_KEY_PREVIOUS')),
    };
    return new Keyring(() => env, 'WSP_MASTER_KEY', false);
  }
  ensureKeyFile(config.dataDir);
  const extra = config.masterKeyPrevious.map((k) => decode(k, 'WSP_MASTER_KEY_PREVIOUS'));
  const load = (): LoadedKeys => {
    const files = readKeyFiles(config.dataDir);
    return { current: files.current, previous: [...files.previous, ...extra] };
  };
  return new Keyring(load, path.join(config.dataDir, KEY_FILE), true);
}

/**
 * Creates `master.key` (0600) unless it exists. The file appears complete or not at all, so two
 * processes starting at once agree on one key and neither reads a half-written file.
 */
export function ensureKeyFile(dataDir: string): void {
  makeDirectory(dataDir, 0o700);
  const file = path.join(dataDir, KEY_FILE);
  if (fs.existsSync(file)) return;
  try {
    writeKeyFile(file, `${randomBytes(KEY_BYTES).toString('base64')}\n`, 'create');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

export function readKeyFiles(dataDir: string): LoadedKeys {
  const file = path.join(dataDir, KEY_FILE);
  const current = decode(readPrivateFile(file)?.trim() ?? '', file);
  const prevFile = path.join(dataDir, PREVIOUS_KEY_FILE);
  const previous = (readPrivateFile(prevFile) ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => decode(l, prevFile));
  return { current, previous };
}

/** A key file others can read is refused, as ssh refuses such a private key. */
function readPrivateFile(file: string): string | undefined {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  if (process.platform !== 'win32' && (stat.mode & 0o077) !== 0) {
    throw new MasterKeyError(`${file} is accessible by other users (mode ${(stat.mode & 0o777).toString(8)}): chmod 600 it`);
  }
  return fs.readFileSync(file, 'utf8');
}

/**
 * Writes a key file atomically and durably: a crash leaves the old file or the new one, never
 * half of one. `create` fails with EEXIST when the file exists; `replace` replaces it.
 */
export function writeKeyFile(file: string, content: string, mode: 'create' | 'replace'): void {
  const tmp = `${file}.tmp-${randomBytes(6).toString('hex')}`;
  const fd = fs.openSync(tmp, 'wx', 0o600);
  try {
    fs.writeSync(fd, content);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    if (mode === 'replace') fs.renameSync(tmp, file);
    else fs.linkSync(tmp, file);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  const dir = fs.openSync(path.dirname(file), 'r');
  try {
    fs.fsyncSync(dir);
  } finally {
    fs.closeSync(dir);
  }
}
