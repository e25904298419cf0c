/**
 * How many `git upload-pack` processes this server runs at once. Each fetch is a git process
 * (and a `pack-objects` under it) holding memory and a core while it packs: without a cap, a
 * client opening many clones at once, or many clients, would exhaust the machine. The cap is per
 * process (every server instance has its own), and within it per credential, per user (one
 * person's sessions together: sessions are cheap to mint) and per workspace, so no one credential,
 * person or tenant can take every slot.
 */
export interface FetchSlotLimits {
  /** git upload-pack processes at once in this server process. */
  perProcess: number;
  /** ... of which one credential may hold at most this many, */
  perCredential: number;
  /** ... one user, over all their sessions and JWTs, this many, */
  perUser: number;
  /** ... and one workspace, over all its members and tokens, this many. */
  perWorkspace: number;
}

export const DEFAULT_FETCH_SLOT_LIMITS: FetchSlotLimits = { perProcess: 16, perCredential: 4, perUser: 4, perWorkspace: 8 };

/** Seconds a refused fetch is told to wait: one fetch of an install repository takes about that. */
export const FETCH_RETRY_AFTER_SECONDS = 2;

export type SlotRefusal = 'credential' | 'user' | 'workspace' | 'process';

/** Who asks for a slot: the credential, its user (none for a workspace API token) and the workspace. */
export interface SlotHolder {
  credential: string;
  user: string | null;
  workspace: string;
}

export class FetchSlots {
  private total = 0;
  private readonly held = new Map<string, number>();

  constructor(public limits: FetchSlotLimits = { ...DEFAULT_FETCH_SLOT_LIMITS }) {}

  /**
   * Takes a slot for `holder`: a release function (calling it twice releases once), or why none
   * is free: the credential, the user or the workspace holds its share, or the process is full.
   */
  acquire(holder: SlotHolder | string): (() => void) | SlotRefusal {
    const h: SlotHolder = typeof holder === 'string' ? { credential: holder, user: null, workspace: `only:${holder}` } : holder;
    const keys: Array<[string, Exclude<SlotRefusal, 'process'>, number]> = [
      [`c:${h.credential}`, 'credential', this.limits.perCredential],
      ...(h.user === null ? [] : ([[`u:${h.user}`, 'user', this.limits.perUser]] as Array<[string, 'user', number]>)),
      [`w:${h.workspace}`, 'workspace', this.limits.perWorkspace],
    ];
    for (const [key, refusal, limit] of keys) if ((this.held.get(key) ?? 0) >= limit) return refusal;
    if (this.total >= this.limits.perProcess) return 'process';
    this.total++;
    for (const [key] of keys) this.held.set(key, (this.held.get(key) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total--;
      for (const [key] of keys) {
        const left = (this.held.get(key) ?? 1) - 1;
        if (left > 0) this.held.set(key, left);
        else this.held.delete(key);
      }
    };
  }

  /** Slots in use: by everyone, or by one credential. */
  inUse(credential?: string): number {
    return credential === undefined ? this.total : (this.held.get(`c:${credential}`) ?? 0);
  }
}

/** This process's slots: every app built in the process shares them, as they share its cores. */
export const fetchSlots = new FetchSlots();
