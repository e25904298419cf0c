/**
 * How many `git upload-pack` processes this server runs at once. Each fetch is a git process
 * (and a `pack-objects` under it) holding memory and a core while it packs: without a cap, a
 * client opening many clones at once, or many clients, would exhaust the machine. The cap is per
 * process (every server instance has its own) and per credential within it, so one credential
 * cannot take every slot.
 */
export interface FetchSlotLimits {
  /** git upload-pack processes at once in this server process. */
  perProcess: number;
  /** ... of which one credential may hold at most this many. */
  perCredential: number;
}

export const DEFAULT_FETCH_SLOT_LIMITS: FetchSlotLimits = { perProcess: 16, perCredential: 4 };

/** Seconds a refused fetch is told to wait: one fetch of an install repository takes about that. */
export const FETCH_RETRY_AFTER_SECONDS = 2;

export type SlotRefusal = 'credential' | 'process';

export class FetchSlots {
  private total = 0;
  private readonly held = new Map<string, number>();

  constructor(public limits: FetchSlotLimits = { ...DEFAULT_FETCH_SLOT_LIMITS }) {}

  /**
   * Takes a slot for `credential`: a release function (calling it twice releases once), or why
   * none is free: the credential holds its share, or the process is full.
   */
  acquire(credential: string): (() => void) | SlotRefusal {
    const mine = this.held.get(credential) ?? 0;
    if (mine >= this.limits.perCredential) return 'credential';
    if (this.total >= this.limits.perProcess) return 'process';
    this.total++;
    this.held.set(credential, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total--;
      const left = (this.held.get(credential) ?? 1) - 1;
      if (left > 0) this.held.set(credential, left);
      else this.held.delete(credential);
    };
  }

  /** Slots in use: by everyone, or by one credential. */
  inUse(credential?: string): number {
    return credential === undefined ? this.total : (this.held.get(credential) ?? 0);
  }
}

/** This process's slots: every app built in the process shares them, as they share its cores. */
export const fetchSlots = new FetchSlots();
