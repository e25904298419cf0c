/** One injectable source of time, so tests can move it instead of waiting. */
export interface Clock {
  nowMs(): number;
}

export const systemClock: Clock = { nowMs: () => Date.now() };

export function nowSeconds(clock: Clock): number {
  return Math.floor(clock.nowMs() / 1000);
}

/** A clock tests can set and advance. */
export class ManualClock implements Clock {
  constructor(private ms: number = Date.now()) {}
  nowMs(): number {
    return this.ms;
  }
  advanceSeconds(s: number): void {
    this.ms += s * 1000;
  }
  set(ms: number): void {
    this.ms = ms;
  }
}
