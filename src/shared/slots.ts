/**
 * At most `size` of some work at once in this process; the rest wait their turn, first come first
 * served. With `restAfter`, a slot handed straight to work waiting in line is first held idle for
 * that share of the time the work before took, at most `maxRestMs`: work that comes in bursts
 * leaves gaps for the rest of the process, and work that took long waiting (a slow disk) rather
 * than working does not hold the next one for as long. Work that finds a slot free starts at once.
 */
export class Slots {
  private busy = 0;
  private readonly queue: (() => void)[] = [];

  constructor(
    private readonly size: number,
    private readonly restAfter = 0,
    private readonly maxRestMs = 100,
  ) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.busy >= this.size) await new Promise<void>((resolve) => this.queue.push(resolve));
    else this.busy++;
    const started = performance.now();
    try {
      return await work();
    } finally {
      // The slot passes to the next in line (after its rest), or is freed.
      const next = this.queue.shift();
      if (!next) this.busy--;
      else if (this.restAfter > 0) setTimeout(next, Math.min((performance.now() - started) * this.restAfter, this.maxRestMs));
      else next();
    }
  }
}
