/**
 * Answers already written, by a key that names exactly one answer (a versioned list's ETag),
 * the least recently used dropped first once their bytes pass `maxBytes`: a bound on the memory
 * they hold, whatever the number of lists.
 *
 * Kept as bytes, not text: Node writes a string answer by joining it to the response's head
 * (a new string of both on every request, copied again into the socket's buffer), where bytes
 * go to the socket as they are. That string was a third of what a kept page's request allocated
 * (docs/benchmarks.md, round ten).
 */
export class AnswerCache {
  private readonly answers = new Map<string, Buffer>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** The key last set or answered: already the last to go. */
  private newest: string | undefined;

  get(key: string): Buffer | undefined {
    const answer = this.answers.get(key);
    if (answer === undefined || key === this.newest) return answer;
    // Map keeps insertion order: moved to the end, it is the last to go.
    this.answers.delete(key);
    this.answers.set(key, answer);
    this.newest = key;
    return answer;
  }

  set(key: string, answer: Buffer): void {
    if (answer.length > this.maxBytes) return;
    const before = this.answers.get(key);
    if (before !== undefined) {
      this.answers.delete(key);
      this.bytes -= before.length;
    }
    this.answers.set(key, answer);
    this.newest = key;
    this.bytes += answer.length;
    for (const [oldest, kept] of this.answers) {
      if (this.bytes <= this.maxBytes) break;
      this.answers.delete(oldest);
      this.bytes -= kept.length;
    }
  }

  get size(): number {
    return this.answers.size;
  }

  get heldBytes(): number {
    return this.bytes;
  }
}
