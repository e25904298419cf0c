/** At most `size` of some work at once in this process; the rest wait their turn, first come first served. */
export class Slots {
  private busy = 0;
  private readonly queue: (() => void)[] = [];

  constructor(private readonly size: number) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.busy >= this.size) await new Promise<void>((resolve) => this.queue.push(resolve));
    else this.busy++;
    try {
      return await work();
    } finally {
      // The slot passes to the next in line, or is freed.
      const next = this.queue.shift();
      if (next) next();
      else this.busy--;
    }
  }
}
